/**
 * The operators' role for the DLQs: what `email-pipeline dlq list|redrive|purge
 * --stack` needs on the DLQ and the subscription DLQ, the work queue and their key, and to redrive
 * the ledger's DLQ through the ledger function's disabled mapping of it; nothing else.
 * The queue policies exempt it by ARN (resource-policies.ts); the ledger's buffer exempts nobody.
 *
 * The mapping switch is lambda:UpdateEventSourceMapping on that one mapping, conditioned on
 * `lambda:FunctionArn` being the ledger function's: the mapping cannot be pointed at another
 * function. IAM has no condition key for an update's FilterCriteria (the Service Authorization
 * Reference lists only lambda:FunctionArn for UpdateEventSourceMapping), so a holder of this role
 * could still set a filter; that is why who may assume it is narrowed: the listed redrive
 * principals, and nobody until some are listed (see {@link redriveTrust}).
 */
import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { principalArn } from './principals';

/**
 * The trust policy's condition value when no redrive principal is listed: not an ARN, so no
 * principal's `aws:PrincipalArn` equals it, and it says in the console why nobody may assume the role.
 */
export const NO_REDRIVE_PRINCIPAL = 'none listed: set redrivePrincipals or redriveRoleAssumedBy';

/**
 * Who may assume the redrive role unless `redriveRoleAssumedBy` says: the listed redrive principals
 * (roles or users, by ARN), and only they. With none listed, nobody: the trust names the deploying
 * account (a trust policy must name a principal) on the condition that the caller's
 * `aws:PrincipalArn` is {@link NO_REDRIVE_PRINCIPAL}, which no principal's is. (The account's root
 * user alone would not do either: it cannot call sts:AssumeRole.) Why not the whole account, whose
 * IAM would then decide: every principal whose policies allow sts:AssumeRole on it (administrators,
 * and PowerUserAccess, which allows every STS action) could take a role that switches the ledger's
 * mapping and sends to the work queue past its policy. The cost of nobody: until operators are
 * listed and the stack deployed again, no one can redrive the DLQ or the subscription DLQ (their
 * policies deny every other sender); dead letters wait there for the DLQs' retention (14 days,
 * SQS's most), long enough to list principals and deploy. The synth warns (buildRedriveRole).
 */
export function redriveTrust(redrivePrincipals: readonly iam.IPrincipal[]): iam.IPrincipal {
  if (redrivePrincipals.length === 0) {
    return new iam.PrincipalWithConditions(new iam.AccountRootPrincipal(), {
      StringEquals: { 'aws:PrincipalArn': NO_REDRIVE_PRINCIPAL },
    });
  }
  for (const principal of redrivePrincipals) principalArn(principal, 'redrivePrincipals');
  const [first, ...more] = redrivePrincipals;
  return more.length === 0 && first ? first : new iam.CompositePrincipal(...redrivePrincipals);
}

/**
 * What the DLQ tools do on a dead-letter queue: list (receive and make visible again), redrive (the
 * native move task, which receives and deletes as the caller, or, with --max, receive, send to the
 * queue, delete) and purge.
 */
export const DEAD_LETTER_OPERATIONS = [
  'sqs:GetQueueAttributes',
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:StartMessageMoveTask',
  'sqs:ListMessageMoveTasks',
  'sqs:CancelMessageMoveTask',
  'sqs:PurgeQueue',
] as const;

/** The redrive role, in `scope` (the pipeline). The CLI reads the stack's outputs first. */
export function buildRedriveRole(
  scope: Construct,
  props: {
    /** Who may assume it. @default {@link redriveTrust} of `redrivePrincipals` */
    readonly assumedBy?: iam.IPrincipal;
    /** The redrive principals the queue policies exempt: they alone may assume it by default. */
    readonly redrivePrincipals: readonly iam.IPrincipal[];
    readonly queue: sqs.IQueue;
    readonly deadLetterQueue: sqs.IQueue;
    /** What SNS could not deliver to the work queue: listed and redriven to it like the DLQ. */
    readonly subscriptionDeadLetterQueue: sqs.IQueue;
    readonly queueKey: kms.IKey;
    /**
     * The ledger's DLQ and the ledger function's disabled mapping of it: `dlq redrive --queue ledger`
     * enables the mapping and watches the DLQ drain (nothing is sent to the ledger's buffer). The
     * ledger function is the mapping's target: the only one an update may name.
     */
    readonly ledger: {
      readonly bufferDeadLetterQueue: sqs.IQueue;
      readonly deadLetterMapping: { readonly arn: string };
      readonly ledgerFunction: { readonly functionArn: string };
    };
  },
): iam.Role {
  const role = new iam.Role(scope, 'RedriveRole', {
    assumedBy: props.assumedBy ?? redriveTrust(props.redrivePrincipals),
    description: "Operators' role for the email pipeline's DLQ: list, redrive and purge it",
    maxSessionDuration: Duration.hours(1),
  });
  if (props.assumedBy === undefined && props.redrivePrincipals.length === 0) {
    Annotations.of(role).addWarningV2(
      'exactly-once-email:redriveRoleUnassumable',
      'Nobody may assume the redrive role: no redrivePrincipals are listed and redriveRoleAssumedBy is not set. ' +
        'Until operators are listed (the construct prop redrivePrincipals, or the context key ' +
        'emailPipeline:redrivePrincipals with EmailPipeline.propsFromContext) and the stack is deployed again, ' +
        'nobody can redrive the DLQs: dead letters wait there for their retention (14 days).',
    );
  }
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadStackOutputs',
      actions: ['cloudformation:DescribeStacks'],
      resources: [Stack.of(scope).stackId],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ListRedrivePurgeDeadLetters',
      actions: [...DEAD_LETTER_OPERATIONS],
      resources: [props.deadLetterQueue.queueArn, props.subscriptionDeadLetterQueue.queueArn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RedriveToTheQueue',
      actions: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
      resources: [props.queue.queueArn],
    }),
  );
  // The ledger's DLQ is redriven by the ledger function itself: this mapping only (UpdateEventSourceMapping
  // and GetEventSourceMapping take an event-source-mapping ARN), and the DLQ's depth to follow it. The
  // switch keeps the mapping on the ledger function (lambda:FunctionArn: the function an update names,
  // or the mapping's own when it names none).
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadLedgerDeadLetterMapping',
      actions: ['lambda:GetEventSourceMapping'],
      resources: [props.ledger.deadLetterMapping.arn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'SwitchLedgerDeadLetterMapping',
      actions: ['lambda:UpdateEventSourceMapping'],
      resources: [props.ledger.deadLetterMapping.arn],
      conditions: { StringEquals: { 'lambda:FunctionArn': props.ledger.ledgerFunction.functionArn } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'FollowLedgerDeadLetters',
      actions: ['sqs:GetQueueAttributes'],
      resources: [props.ledger.bufferDeadLetterQueue.queueArn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadAndWriteEncryptedMessages',
      actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
      resources: [props.queueKey.keyArn],
    }),
  );
  return role;
}
