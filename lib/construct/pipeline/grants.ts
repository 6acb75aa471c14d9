/**
 * The send function's own permissions, least privilege: its records, SendEmail
 * as the configured sender only, the DLQ and the two work queues (a retry goes
 * back to its own queue as a delayed copy), the schedule queue (a message not
 * yet due waits there), the shared rate lease's items (in
 * its table), and the keys it needs for them. The event source adds
 * receive and delete on the work queue; the ledger adds its table.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { ResolvedSettings } from '../../settings';
import { tableKeyStatement } from '../common/keys';

/** Adds the send function's statements to its role (`fn`'s), in a fixed order. */
export function grantSendFunctionLeastPrivilege(
  fn: lambda.Function,
  props: {
    readonly settings: ResolvedSettings;
    /** The function's role (the template wildcard's acknowledgement goes on it). */
    readonly role: iam.IRole;
    readonly table: dynamodb.ITable;
    /** The key of both tables, unless they use the AWS-managed key. */
    readonly tableKey?: kms.IKey;
    readonly queue: sqs.IQueue;
    /** Its retries go back to the queue they came from. */
    readonly highPriorityQueue: sqs.IQueue;
    /** Each team's queue: a team's retries go back there too. @default none */
    readonly teamQueues?: Readonly<Record<string, sqs.IQueue>>;
    /** A message not yet due goes there. */
    readonly scheduleQueue: sqs.IQueue;
    readonly deadLetterQueue: sqs.IQueue;
    readonly queueKey: kms.IKey;
    /** The configuration set every send uses (the ledger's). */
    readonly configurationSetName: string;
    /** SES stored templates it may send with. @default every template of the account and region */
    readonly sesTemplateNames?: readonly string[];
    /** The teams' SES tenants (team-tenants.ts): their sends name them. @default none */
    readonly tenantArns?: readonly string[];
  },
): void {
  const stack = Stack.of(fn);

  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'IdempotencyRecords',
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [props.table.tableArn],
    }),
  );

  // SES v2 SendEmail: identity is required; a configuration set and a stored
  // template are checked too when the request uses them.
  const sesArn = (resource: string, name: string) =>
    stack.formatArn({ service: 'ses', resource, resourceName: name, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  const sesResources = [
    sesArn('identity', props.settings.sesIdentity),
    sesArn('configuration-set', props.configurationSetName),
  ];
  for (const template of props.sesTemplateNames ?? ['*']) {
    sesResources.push(sesArn('template', template));
  }
  // A team's sends name its tenant (TenantName): allowed on the tenants too, whichever way SES authorizes them.
  sesResources.push(...(props.tenantArns ?? []));
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'SendAsConfiguredSender',
      actions: ['ses:SendEmail'],
      resources: sesResources,
      // v1.3: a team's senders too (the send function checks each message's against its team's).
      conditions: { StringEquals: { 'ses:FromAddress': fromAddresses(props.settings) } },
    }),
  );

  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'DeadLetterPermanentFailures',
      actions: ['sqs:SendMessage'],
      resources: [props.deadLetterQueue.queueArn],
    }),
  );
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'BackOffRetries',
      // A retry goes back as a delayed copy (SendMessage); ChangeMessageVisibility when that fails.
      actions: ['sqs:ChangeMessageVisibility', 'sqs:SendMessage'],
      resources: [
        props.queue.queueArn,
        props.highPriorityQueue.queueArn,
        ...Object.values(props.teamQueues ?? {}).map((queue) => queue.queueArn),
      ],
    }),
  );
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'DeferScheduled',
      actions: ['sqs:SendMessage'],
      resources: [props.scheduleQueue.queueArn],
    }),
  );
  // Both tables (its records, the ledger items it reads and marks) with their key, through DynamoDB.
  if (props.tableKey) fn.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'write'));
  // SendMessage to the KMS-encrypted DLQ needs a data key.
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'EncryptDeadLetters',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [props.queueKey.keyArn],
    }),
  );

  if (props.sesTemplateNames === undefined) {
    Validations.of(props.role).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::${sesArnPattern('template/*')}]`,
      reason:
        'Each message names its SES template, so ses:SendEmail is allowed on every template of this account and region; ' +
        'the identity is fixed and ses:FromAddress pins the sender. Set sesTemplateNames to list the templates instead.',
    });
  }
}

/**
 * GetItem on `tables` for `grantee` (EmailPipeline.grantStatusLookup), and their key, through
 * DynamoDB, when it is customer-managed.
 */
export function grantTableReads(
  grantee: iam.IGrantable,
  tables: readonly dynamodb.ITable[],
  tableKey: kms.IKey | undefined,
): iam.Grant {
  const grant = iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:GetItem'],
    resourceArns: tables.map((table) => table.tableArn),
  });
  if (tableKey === undefined) return grant;
  const key = tableKeyStatement('UseTableKey', tableKey, 'read');
  return grant.combine(
    iam.Grant.addToPrincipal({
      grantee,
      actions: key.actions,
      resourceArns: key.resources,
      conditions: key.conditions,
    }),
  );
}

/** How cdk-nag renders an SES ARN of this stack in a finding id. */
function sesArnPattern(resource: string): string {
  return `arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:${resource}`;
}

/**
 * The From addresses the send function may use: senderAddress alone (as a string, the template
 * as before teams), or with teams, it and every team's senders.
 */
export function fromAddresses(settings: ResolvedSettings): string | string[] {
  const teamSenders = Object.values(settings.teams ?? {}).flatMap((team) => team.senders);
  if (teamSenders.length === 0) return settings.senderAddress;
  return [...new Set([settings.senderAddress, ...teamSenders])];
}
