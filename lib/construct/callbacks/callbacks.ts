/**
 * The callbacks of one pipeline (issue 35): every status change the ledger publishes on the
 * delivery-status topic is POSTed to the URL of its key's team (or the pipeline's), signed per
 * Standard Webhooks. {@link EmailPipeline} creates one only when a callback is configured
 * (`callbackUrl`, `teams.<name>.callbackUrl`); without, the template holds nothing of it.
 *
 * delivery-status topic -> (a raw subscription, filtered on the teams) -> callbacks queue (+ DLQ)
 * -> callback function -> the receivers, each try recorded in the callbacks table; a signing
 * secret per callback. The send function tells the queue of the keys it dead-letters itself. It only composes: resources.ts builds the stateful parts,
 * callback-function.ts the function.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CALLBACK_ENV, CALLBACKS_TABLE, PIPELINE_TARGET } from '../../../lambdas/kernel/callbacks/names';
import type { ResolvedSettings } from '../../settings';
import type { ConfiguredCallback } from '../../settings/callbacks';
import { tableKeyStatement } from '../common/keys';
import { acknowledgeServerlessRules } from '../common/nag';
import { onlyTheseSend } from '../common/queues';
import { principalArn } from '../pipeline/principals';
import { DEAD_LETTER_OPERATIONS } from '../pipeline/redrive-role';
import { buildCallbackFunction } from './callback-function';
import { buildCallbacksQueues, buildCallbacksTable, buildSigningSecrets, subscribeCallbacks } from './resources';

/** What the pipeline gives its callbacks. */
export interface CallbacksProps {
  readonly settings: ResolvedSettings;
  /** The callbacks to make, by target (`*`: the pipeline's own, else a team's name); at least one. */
  readonly callbacks: Readonly<Record<string, ConfiguredCallback>>;
  readonly removalPolicy: RemovalPolicy;
  /** Powertools service name of the function's logs and metrics. */
  readonly serviceName: string;
  /** The ledger's delivery-status topic: the callbacks queue's only source. */
  readonly deliveryStatusTopic: sns.ITopic;
  /** The name of the function's log group (the logs key names it). */
  readonly logGroupName: string;
  /** Encrypts the function's logs. @default the default encryption */
  readonly logsKey?: kms.IKey;
  /** Encrypts the callbacks table, as the pipeline's tables. @default the AWS-managed key */
  readonly tableKey?: kms.IKey;
  /**
   * Roles or users (by ARN) that may send to the callbacks queue besides the topic: the redrive
   * role and the redrive principals (`callbacks redrive`, `callbacks replay`).
   */
  readonly redrivePrincipals: readonly iam.IPrincipal[];
  /**
   * The send function: it tells the callbacks queue of a key it dead-letters (no SES event, so no
   * status change, comes of a message never sent: lambdas/send-email/outcome/dead-letter-notice.ts).
   */
  readonly sendFunction: lambda.Function;
}

/** See the module comment. */
export class Callbacks extends Construct {
  /** One item per callback message (its body, state and tries), and each team's callback state. */
  public readonly table: dynamodb.Table;
  /** The delivery-status topic's changes, raw, filtered per callback: the function's source. */
  public readonly queue: sqs.Queue;
  /** Callbacks that will not be delivered, with their reason (`email-pipeline callbacks list`). */
  public readonly deadLetterQueue: sqs.Queue;
  /** Encrypts {@link queue} and {@link deadLetterQueue} (rotation on). */
  public readonly queueKey: kms.Key;
  /** POSTs each status change, signed. */
  public readonly callbackFunction: lambda.Function;
  /** The function's execution role. */
  public readonly role: iam.Role;
  /** The function's log group. */
  public readonly logGroup: logs.LogGroup;
  /** The queue's subscription to the delivery-status topic (raw, filtered on the teams with a callback). */
  public readonly subscription: sns.Subscription;
  /**
   * Each callback's signing secret (JSON `{"key": "<base64>"}`, the receiver's secret `whsec_<key>`),
   * by target: `*` for the pipeline's own callback, else the team's name.
   */
  public readonly signingSecrets: Readonly<Record<string, secretsmanager.Secret>>;

  constructor(scope: Construct, id: string, props: CallbacksProps) {
    super(scope, id);
    const { removalPolicy, callbacks } = props;
    this.table = buildCallbacksTable(this, { removalPolicy, ...(props.tableKey ? { tableKey: props.tableKey } : {}) });
    const queues = buildCallbacksQueues(this, { removalPolicy });
    this.queueKey = queues.queueKey;
    this.queue = queues.queue;
    this.deadLetterQueue = queues.deadLetterQueue;
    this.subscription = subscribeCallbacks(this, {
      callbacks,
      deliveryStatusTopic: props.deliveryStatusTopic,
      ...queues,
    });
    this.signingSecrets = buildSigningSecrets(this, { callbacks, removalPolicy });
    const fn = buildCallbackFunction(this, {
      settings: props.settings,
      removalPolicy,
      serviceName: props.serviceName,
      logGroupName: props.logGroupName,
      ...(props.logsKey ? { logsKey: props.logsKey } : {}),
      callbacks,
      signingSecrets: this.signingSecrets,
      table: this.table,
      ...(props.tableKey ? { tableKey: props.tableKey } : {}),
      ...queues,
    });
    this.callbackFunction = fn.callbackFunction;
    this.role = fn.role;
    this.logGroup = fn.logGroup;

    // Only the status topic (the send function's dead-letter notices, and operators redriving or
    // replaying) may send to the queue: whatever
    // reaches it is POSTed, signed, to the publishers' servers. Only the function, the queue's own
    // redrive and the topic (what it could not deliver) to the DLQ. Denies, which no IAM policy of
    // the account opens.
    const redrivers = props.redrivePrincipals.map((principal) => principalArn(principal, 'redrivePrincipals'));
    const sendRole = tellOfDeadLetters(props.sendFunction, this.queue, this.queueKey, Object.keys(callbacks));
    onlyTheseSend(this.queue, 'OnlyTheStatusTopicSends', {
      'aws:SourceArn': [props.deliveryStatusTopic.topicArn],
      'aws:PrincipalArn': [sendRole.roleArn, ...redrivers],
    });
    onlyTheseSend(this.deadLetterQueue, 'OnlyTheCallbackFunctionDeadLetters', {
      'aws:PrincipalArn': [this.role.roleArn],
      'aws:SourceArn': [this.queue.queueArn, props.deliveryStatusTopic.topicArn],
    });
    acknowledgeServerlessRules({ deadLetterQueues: [this.deadLetterQueue], functions: [this.callbackFunction] });
  }

  /** The signing secret of `team`'s callback, or the pipeline's own without a team; undefined when it has none. */
  public signingSecret(team?: string): secretsmanager.Secret | undefined {
    return this.signingSecrets[team ?? PIPELINE_TARGET];
  }

  /**
   * What `email-pipeline callbacks` needs, for `role` (the redrive role): list, redrive (native
   * move task or copy) and purge the DLQ, send to the queue (a redrive, a replay: the queue's policy
   * admits the redrive principals only), their key; the table's history (`list --history`,
   * `replay`: Query on the table and its `by-day` index, BatchGetItem) and a team's callback state
   * (`enable` deletes it), with the table's key through DynamoDB.
   */
  public grantRedrive(role: iam.IRole, tableKey?: kms.IKey): void {
    const statements = [
      new iam.PolicyStatement({
        sid: 'ListRedrivePurgeCallbackDeadLetters',
        actions: [...DEAD_LETTER_OPERATIONS],
        resources: [this.deadLetterQueue.queueArn],
      }),
      new iam.PolicyStatement({
        sid: 'RedriveToTheCallbacksQueue',
        actions: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
        resources: [this.queue.queueArn],
      }),
      new iam.PolicyStatement({
        sid: 'ReadAndWriteCallbackMessages',
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: [this.queueKey.keyArn],
      }),
      new iam.PolicyStatement({
        sid: 'CallbackHistoryAndState',
        actions: ['dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:DeleteItem'],
        resources: [this.table.tableArn, `${this.table.tableArn}/index/${CALLBACKS_TABLE.dayIndex.indexName}`],
      }),
      ...(tableKey ? [tableKeyStatement('UseCallbacksTableKey', tableKey, 'write')] : []),
    ];
    for (const statement of statements) role.addToPrincipalPolicy(statement);
  }
}

/**
 * Lets the send function tell the callbacks queue of a key it dead-letters: the queue and the
 * targets with a callback in its environment (as handlerEnvironment writes them locally, last),
 * SendMessage on the queue and its key. Returns its role, which the queue's policy admits.
 */
function tellOfDeadLetters(
  sendFunction: lambda.Function,
  queue: sqs.IQueue,
  queueKey: kms.IKey,
  targets: readonly string[],
): iam.IRole {
  sendFunction.addEnvironment(CALLBACK_ENV.queueUrl, queue.queueUrl);
  sendFunction.addEnvironment(CALLBACK_ENV.targetNames, targets.join(','));
  sendFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'TellCallbacksOfDeadLetters',
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
    }),
  );
  sendFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'EncryptDeadLetterNotices',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [queueKey.keyArn],
    }),
  );
  return sendFunction.role!;
}
