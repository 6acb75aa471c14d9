/**
 * The send ledger's functions, each with its own role (no AWSLambdaBasicExecutionRole) and the
 * least it needs: the ledger function, fed by the buffer, records SES events in the ledger table
 * and publishes status changes; the status function answers `GET /deliveries/{key}` behind an
 * IAM-authenticated function URL, and reads only; the cancel function answers
 * `DELETE /deliveries/{key}` behind a function URL of its own, which only the cancel principals
 * may invoke.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ENV, LEDGER_ENV } from '../../../lambdas/kernel/environment';
import { CLAIM_ATTRIBUTES } from '../../../lambdas/kernel/ledger/binding';
import { LEDGER_INTERNAL, LEDGER_STATUS_INDEX, LEDGER_TABLE, LEDGER_TEAM } from '../../../lambdas/kernel/ledger/schema';
import type { ResolvedSettings } from '../../settings';
import { handlerCode, type LambdaName } from '../assets';
import { LEDGER_FUNCTION_MEMORY_MB, functionNodeOptions, ledgerEnvironment } from '../handler-env';
import { tableKeyStatement } from '../common/keys';

/** Fixed sizing of the two ledger-side functions and the buffer; small, as their work is. */
export const LEDGER_FUNCTIONS = {
  /** Ledger function: one UpdateItem (and maybe one Publish) per event. */
  ledgerTimeoutSeconds: 30,
  /** Status function: two GetItem at most. */
  statusTimeoutSeconds: 10,
  /**
   * Concurrency reserved for (and the most allowed to) the cancel function, when the status
   * function has some reserved (statusReservedConcurrency above 0): cancels are rare, and come from
   * the cancel principals only.
   */
  cancelReservedConcurrency: 2,
  memorySizeMb: LEDGER_FUNCTION_MEMORY_MB,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  maxConcurrency: 5,
  /**
   * The most concurrent invocations of the DLQ's mapping while an operator redrives it (2, the
   * least SQS mappings allow): a redrive goes beside the buffer's traffic, not over it.
   */
  deadLetterMaxConcurrency: 2,
  /** Receives of one event before it moves to the ledger's DLQ. */
  maxReceiveCount: 5,
} as const;

/** What both functions are built with. */
export interface LedgerFunctionsCommon {
  readonly settings: ResolvedSettings;
  readonly removalPolicy: RemovalPolicy;
  readonly runtime: lambda.Runtime;
  /** Powertools service name of the functions' logs. */
  readonly serviceName: string;
  /** Encrypts the functions' logs. @default the default encryption */
  readonly logsKey?: kms.IKey;
  /** The key of both tables, which the functions then get (through DynamoDB). @default the AWS-managed key */
  readonly tableKey?: kms.IKey;
  /** The ledger table. */
  readonly table: dynamodb.ITable;
  /** The send function's idempotency table. */
  readonly idempotencyTable: dynamodb.ITable;
}

/** The variables both functions share. */
function commonEnvironment(props: LedgerFunctionsCommon): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: props.serviceName,
    POWERTOOLS_LOG_LEVEL: props.settings.logLevel,
    POWERTOOLS_METRICS_NAMESPACE: props.settings.metricsNamespace,
    [LEDGER_ENV.tableName]: props.table.tableName,
    NODE_OPTIONS: functionNodeOptions(LEDGER_FUNCTIONS.memorySizeMb),
  };
}

/** What {@link buildLedgerFunction} made. */
export interface LedgerFunction {
  readonly ledgerFunction: lambda.Function;
  /** The mapping of the buffer's DLQ, created disabled: `dlq redrive --queue ledger` enables it for a while. */
  readonly deadLetterSource: SqsEventSource;
}

/**
 * The ledger function, fed by the buffer: it reads a key's claim (whose attempt ids bind events to
 * sends), updates the ledger item and publishes status changes to the encrypted status topic; in
 * `scope` (the ledger). A second mapping, disabled, reads the buffer's DLQ: an operator redrives
 * that DLQ by enabling it, since nobody but SES's events rule may send to the buffer (its policy),
 * and the DLQ admits only the SES events rule and the buffer's own redrive, so reading it directly
 * opens no other way in.
 */
export function buildLedgerFunction(
  scope: Construct,
  props: LedgerFunctionsCommon & {
    readonly logGroupName: string;
    readonly bufferQueue: sqs.IQueue;
    readonly bufferDeadLetterQueue: sqs.IQueue;
    readonly deliveryStatusTopic: sns.ITopic;
    /** Encrypts the status topic. */
    readonly topicKey: kms.IKey;
    /** The configuration set every send uses. */
    readonly configurationSetName: string;
    /** The send function's role: SES names it in each event's `ses:caller-identity` tag. */
    readonly senderRole: iam.IRole;
  },
): LedgerFunction {
  const ledgerFunction = createFunction(scope, 'Ledger', props, {
    asset: 'ledger',
    logGroup: { name: props.logGroupName },
    timeoutSeconds: LEDGER_FUNCTIONS.ledgerTimeoutSeconds,
    description: 'Records SES events per dedupe key in the send ledger and publishes status changes',
    environment: {
      ...commonEnvironment(props),
      ...ledgerEnvironment(props.settings, {
        tableName: props.table.tableName,
        deliveryStatusTopicArn: props.deliveryStatusTopic.topicArn,
        origin: {
          accountId: Stack.of(scope).account,
          configurationSetName: props.configurationSetName,
          senderRoleName: props.senderRole.roleName,
        },
        idempotencyTableName: props.idempotencyTable.tableName,
      }),
    },
  });
  const batches = {
    batchSize: LEDGER_FUNCTIONS.batchSize,
    maxBatchingWindow: Duration.seconds(LEDGER_FUNCTIONS.maxBatchingWindowSeconds),
    reportBatchItemFailures: true,
  };
  ledgerFunction.addEventSource(
    new SqsEventSource(props.bufferQueue, { ...batches, maxConcurrency: LEDGER_FUNCTIONS.maxConcurrency }),
  );
  // Grants receive, delete and the queue key's decrypt, as for the buffer.
  const deadLetterSource = new SqsEventSource(props.bufferDeadLetterQueue, {
    ...batches,
    maxConcurrency: LEDGER_FUNCTIONS.deadLetterMaxConcurrency,
    enabled: false,
  });
  ledgerFunction.addEventSource(deadLetterSource);
  ledgerFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'LedgerItems',
      // PutItem: an event that arrives out of order is merged and written back whole (ledger-store.ts).
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      resources: [props.table.tableArn],
    }),
  );
  // A key's claim holds the attempt ids of its sends: an event binds to a send only through one.
  ledgerFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'ReadSendClaims',
      // BatchGetItem: a batch's Send events read their claims together (claim-evidence.ts).
      actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
      resources: [props.idempotencyTable.tableArn],
    }),
  );
  if (props.tableKey) ledgerFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'write'));
  // Publishing to an encrypted topic needs a data key (no GenerateDataKey* wildcard).
  ledgerFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'PublishStatusChanges',
      // GetTopicAttributes: the ledger publishes only while the topic has a subscription.
      actions: ['sns:Publish', 'sns:GetTopicAttributes'],
      resources: [props.deliveryStatusTopic.topicArn],
    }),
  );
  ledgerFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'EncryptStatusChanges',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [props.topicKey.keyArn],
    }),
  );
  return { ledgerFunction, deadLetterSource };
}

/** What {@link buildStatusFunction} made. */
export interface StatusFunction {
  readonly statusFunction: lambda.Function;
  /** Its log group (the cancel function's too). */
  readonly logGroup: logs.ILogGroup;
  /** `GET <url>deliveries/{key}`, SigV4-signed (AWS_IAM). */
  readonly statusUrl: lambda.FunctionUrl;
}

/** The variables the status and cancel functions share: the tables, the key prefix, the mark's lifetime. */
function deliveriesEnvironment(props: LedgerFunctionsCommon): Record<string, string> {
  return {
    ...commonEnvironment(props),
    [ENV.tableName]: props.idempotencyTable.tableName,
    [ENV.keyPrefix]: props.settings.idempotencyKeyPrefix,
    [ENV.dedupeWindowSeconds]: String(props.settings.dedupeWindowSeconds),
  };
}

/** GetItem on both tables: a key's report (the ledger item, and its idempotency record). */
function readDeliveriesStatement(props: LedgerFunctionsCommon): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'ReadDeliveries',
    actions: ['dynamodb:GetItem'],
    resources: [props.table.tableArn, props.idempotencyTable.tableArn],
  });
}

/**
 * The status function (reserved concurrency, GetItem on both tables, nothing else) and its
 * IAM-authenticated function URL; in `scope` (the ledger). It cannot cancel: its role may not write.
 */
export function buildStatusFunction(
  scope: Construct,
  props: LedgerFunctionsCommon & { readonly logGroupName: string },
): StatusFunction {
  const statusFunction = createFunction(scope, 'Status', props, {
    asset: 'status',
    logGroup: { name: props.logGroupName },
    timeoutSeconds: LEDGER_FUNCTIONS.statusTimeoutSeconds,
    // A flood of status requests, signed by any principal allowed to call the URL, cannot take the
    // account's concurrency from the send and ledger functions (two GetItem each: 5 serve hundreds
    // per second). 0: none reserved, for accounts whose quota leaves nothing to reserve.
    ...(props.settings.statusReservedConcurrency > 0
      ? { reservedConcurrency: props.settings.statusReservedConcurrency }
      : {}),
    description: 'GET /deliveries/{key}: the delivery status of a dedupe key (read only)',
    environment: deliveriesEnvironment(props),
  });
  statusFunction.addToRolePolicy(readDeliveriesStatement(props));
  if (props.tableKey) statusFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'read'));
  const statusUrl = statusFunction.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
  return { statusFunction, statusUrl, logGroup: statusFunction.logGroup };
}

/** What {@link buildCancelFunction} made. */
export interface CancelFunction {
  readonly cancelFunction: lambda.Function;
  /** `DELETE <url>deliveries/{key}`, SigV4-signed (AWS_IAM): invoked by the cancel principals only. */
  readonly cancelUrl: lambda.FunctionUrl;
}

/**
 * The cancel function and its own IAM-authenticated function URL; in `scope` (the ledger). Who may
 * cancel is who may invoke this URL (grantCancel): IAM decides it, the function checks nobody. It
 * logs to the status function's log group, where cancels were before it had a function of its own.
 */
export function buildCancelFunction(
  scope: Construct,
  props: LedgerFunctionsCommon & { readonly logGroup: logs.ILogGroup },
): CancelFunction {
  const cancelFunction = createFunction(scope, 'Cancel', props, {
    asset: 'cancel',
    logGroup: { shared: props.logGroup },
    timeoutSeconds: LEDGER_FUNCTIONS.statusTimeoutSeconds,
    // None reserved where the status function has none (an account whose quota leaves nothing to reserve).
    ...(props.settings.statusReservedConcurrency > 0
      ? { reservedConcurrency: LEDGER_FUNCTIONS.cancelReservedConcurrency }
      : {}),
    description: 'DELETE /deliveries/{key}: cancels a dedupe key not yet sent (the cancel principals only)',
    environment: deliveriesEnvironment(props),
  });
  cancelFunction.addToRolePolicy(readDeliveriesStatement(props));
  for (const statement of cancelStatements(props)) cancelFunction.addToRolePolicy(statement);
  if (props.tableKey) cancelFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'write'));
  const cancelUrl = cancelFunction.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
  return { cancelFunction, cancelUrl };
}

/** The attributes a cancel writes: the cancel mark (a Powertools record) and the ledger's `Cancelled` event. */
export const CANCEL_WRITES = {
  mark: ['id', 'status', 'expiration', 'data', CLAIM_ATTRIBUTES.ledgerKey],
  ledger: [
    LEDGER_TABLE.partitionKey,
    'events',
    'status',
    'updatedAt',
    LEDGER_TABLE.ttlAttribute,
    // The index by outcome files the key as cancelled.
    LEDGER_STATUS_INDEX.partitionKey,
    // The ledger's bookkeeping, all but the bound attempts, which only SES's Send events write.
    LEDGER_INTERNAL.eventIds,
    LEDGER_INTERNAL.lastAt,
    LEDGER_INTERNAL.rank,
    LEDGER_INTERNAL.version,
    // A team's cancel names the key's team, for deliveries --team.
    LEDGER_TEAM.team,
    LEDGER_TEAM.teamKey,
  ],
} as const;

/**
 * What the cancel function may write: PutItem of the cancel mark on the idempotency
 * table and UpdateItem of the `Cancelled` event on the ledger table, each limited to the attributes
 * it writes and to no returned values; it cannot delete or change a record any other way.
 */
function cancelStatements(props: LedgerFunctionsCommon): iam.PolicyStatement[] {
  const only = (attributes: readonly string[]) => ({
    'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
    StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
  });
  return [
    new iam.PolicyStatement({
      sid: 'CancelMark',
      actions: ['dynamodb:PutItem'],
      resources: [props.idempotencyTable.tableArn],
      conditions: only(CANCEL_WRITES.mark),
    }),
    new iam.PolicyStatement({
      sid: 'CancelledEvent',
      actions: ['dynamodb:UpdateItem'],
      resources: [props.table.tableArn],
      conditions: only(CANCEL_WRITES.ledger),
    }),
  ];
}

/** One function with its own role and log group (no AWSLambdaBasicExecutionRole). */
function createFunction(
  scope: Construct,
  id: string,
  props: LedgerFunctionsCommon,
  spec: {
    /** The pre-built bundle (lib/construct/assets.ts). */
    readonly asset: LambdaName;
    /** A log group of its own by this name, or one it shares. */
    readonly logGroup: { readonly name: string } | { readonly shared: logs.ILogGroup };
    readonly timeoutSeconds: number;
    /** @default none: the account's unreserved concurrency */
    readonly reservedConcurrency?: number;
    readonly description: string;
    readonly environment: Record<string, string>;
  },
): lambda.Function {
  const logGroup =
    'shared' in spec.logGroup
      ? spec.logGroup.shared
      : new logs.LogGroup(scope, `${id}Logs`, {
          logGroupName: spec.logGroup.name,
          retention: props.settings.logRetentionDays as logs.RetentionDays,
          removalPolicy: props.removalPolicy,
          ...(props.logsKey ? { encryptionKey: props.logsKey } : {}),
        });
  const role = new iam.Role(scope, `${id}FunctionRole`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `Execution role of the email pipeline ${id.toLowerCase()} function`,
  });
  logGroup.grantWrite(role);
  return new lambda.Function(scope, `${id}Function`, {
    role,
    code: handlerCode(spec.asset),
    handler: 'index.handler',
    runtime: props.runtime,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(spec.timeoutSeconds),
    ...(spec.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: spec.reservedConcurrency } : {}),
    memorySize: LEDGER_FUNCTIONS.memorySizeMb,
    logGroup,
    environment: spec.environment,
    description: spec.description,
  });
}
