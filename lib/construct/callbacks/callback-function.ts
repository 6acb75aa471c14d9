/**
 * The callback function (lambdas/callbacks/): fed by the callbacks queue, it POSTs each status
 * change to its callback's URL, signed with the callback's key, and records each try in the
 * callbacks table. Its own role, which allows exactly: consuming the callbacks queue (and
 * ChangeMessageVisibility: a retry is the same message made visible later), sending to the
 * callbacks DLQ, GetItem, UpdateItem and PutItem on the callbacks table (not its index: the
 * function lists nothing), GetSecretValue on the callbacks' signing secrets, and writing its own
 * log group.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { CALLBACK_FUNCTION, type CallbackTarget } from '../../../lambdas/kernel/callbacks/names';
import type { ResolvedSettings } from '../../settings';
import type { ConfiguredCallback } from '../../settings/callbacks';
import { handlerCode } from '../assets';
import { tableKeyStatement } from '../common/keys';
import { RUNTIME } from '../common/runtime';
import { callbackEnvironment, functionNodeOptions } from '../handler-env';

/** What {@link buildCallbackFunction} made. */
export interface CallbackFunction {
  readonly callbackFunction: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/** The function, its role, its log group and its mapping of the callbacks queue, in `scope` (the callbacks). */
export function buildCallbackFunction(
  scope: Construct,
  props: {
    readonly settings: ResolvedSettings;
    readonly removalPolicy: RemovalPolicy;
    /** The Powertools service name: its metrics count under the pipeline's `service`. */
    readonly serviceName: string;
    /** Its log group's name (the logs key names it). */
    readonly logGroupName: string;
    /** Encrypts its logs, as the other functions'. @default the default encryption */
    readonly logsKey?: kms.IKey;
    readonly callbacks: Readonly<Record<string, ConfiguredCallback>>;
    readonly signingSecrets: Readonly<Record<string, secretsmanager.ISecret>>;
    readonly table: dynamodb.ITable;
    /** The table's customer-managed key, which the function then gets (through DynamoDB). @default the AWS-managed key */
    readonly tableKey?: kms.IKey;
    readonly queue: sqs.IQueue;
    readonly deadLetterQueue: sqs.IQueue;
    readonly queueKey: kms.IKey;
  },
): CallbackFunction {
  const logGroup = new logs.LogGroup(scope, 'FunctionLogs', {
    logGroupName: props.logGroupName,
    retention: props.settings.logRetentionDays as logs.RetentionDays,
    removalPolicy: props.removalPolicy,
    ...(props.logsKey ? { encryptionKey: props.logsKey } : {}),
  });
  const role = new iam.Role(scope, 'FunctionRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: 'Execution role of the email pipeline callback function',
  });
  logGroup.grantWrite(role);
  // On AWS a target names its secret by ARN: the function reads the key, the template holds none.
  const targets: Record<string, CallbackTarget> = Object.fromEntries(
    Object.entries(props.callbacks).map(([target, callback]) => [
      target,
      { ...callback, secretArn: props.signingSecrets[target]!.secretArn },
    ]),
  );
  const callbackFunction = new lambda.Function(scope, 'Function', {
    role,
    code: handlerCode('callbacks'),
    handler: 'index.handler',
    runtime: RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(CALLBACK_FUNCTION.timeoutSeconds),
    memorySize: CALLBACK_FUNCTION.memorySizeMb,
    logGroup,
    environment: {
      ...callbackEnvironment(
        props.settings,
        {
          tableName: props.table.tableName,
          queueUrl: props.queue.queueUrl,
          deadLetterQueueUrl: props.deadLetterQueue.queueUrl,
          targets,
        },
        props.serviceName,
      ),
      NODE_OPTIONS: functionNodeOptions(CALLBACK_FUNCTION.memorySizeMb),
    },
    description: "Callbacks: POSTs each status change to its team's URL, signed per Standard Webhooks",
  });
  // Receive, delete, ChangeMessageVisibility and the key's decrypt on the callbacks queue.
  callbackFunction.addEventSource(
    new SqsEventSource(props.queue, {
      batchSize: CALLBACK_FUNCTION.batchSize,
      maxConcurrency: CALLBACK_FUNCTION.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  for (const statement of callbackStatements(props)) callbackFunction.addToRolePolicy(statement);
  if (props.tableKey) callbackFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'write'));
  return { callbackFunction, role, logGroup };
}

/** The function's statements beside its mapping's and its log group's. */
function callbackStatements(props: {
  readonly table: dynamodb.ITable;
  readonly deadLetterQueue: sqs.IQueue;
  readonly queueKey: kms.IKey;
  readonly signingSecrets: Readonly<Record<string, secretsmanager.ISecret>>;
}): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'DeadLetterCallbacks',
      actions: ['sqs:SendMessage'],
      resources: [props.deadLetterQueue.queueArn],
    }),
    new iam.PolicyStatement({
      sid: 'EncryptDeadLetters',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [props.queueKey.keyArn],
    }),
    new iam.PolicyStatement({
      sid: 'CallbackItems',
      // A callback's item (claim, tries, outcome) and a team's callback state (PutItem: a 410 disables it).
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
      resources: [props.table.tableArn],
    }),
    new iam.PolicyStatement({
      sid: 'ReadSigningKeys',
      actions: ['secretsmanager:GetSecretValue'],
      resources: Object.values(props.signingSecrets).map((secret) => secret.secretArn),
    }),
  ];
}
