/**
 * The send ledger's infrastructure: SES configuration set and its event
 * destination -> encrypted events topic -> encrypted buffer queue (+ DLQ) ->
 * ledger function -> ledger table and delivery-status topic; and the status
 * function behind an IAM-authenticated function URL (`GET /deliveries/{key}`).
 *
 * {@link EmailPipeline} creates one of these; it is a construct of its own so
 * the pipeline's code stays about sending.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LEDGER_ENV, LEDGER_TABLE } from '../../../lambdas/ledger/schema';
import { ledgerEnvironment } from '../handler-env';
import { ENV } from '../../../lambdas/send-email/settings';
import { handlerCode, type LambdaName } from '../assets';
import { acknowledgeServerlessRules, onlyTheseSend, protectedTableProps, tableKeyStatement } from '../shared';
import { DLQ_RETENTION_SECONDS, type ResolvedSettings } from '../../config';

/** The SES events the ledger records (all but opens, clicks and subscriptions, which say nothing about delivery). */
export const LEDGER_EVENT_TYPES: readonly ses.EmailSendingEvent[] = [
  ses.EmailSendingEvent.SEND,
  ses.EmailSendingEvent.DELIVERY,
  ses.EmailSendingEvent.BOUNCE,
  ses.EmailSendingEvent.COMPLAINT,
  ses.EmailSendingEvent.REJECT,
  ses.EmailSendingEvent.DELIVERY_DELAY,
  ses.EmailSendingEvent.RENDERING_FAILURE,
];

/** The SES events counted in CloudWatch (AWS/SES, by configuration set) for the dashboard. */
export const DELIVERY_METRIC_EVENTS: readonly ses.EmailSendingEvent[] = [
  ses.EmailSendingEvent.DELIVERY,
  ses.EmailSendingEvent.BOUNCE,
  ses.EmailSendingEvent.COMPLAINT,
];

/** SES's auto-tag naming the configuration set of a send: the dimension of those counts. */
export const CONFIGURATION_SET_DIMENSION = 'ses:configuration-set';

/** Fixed sizing of the two ledger-side functions and the buffer; small, as their work is. */
export const LEDGER_FUNCTIONS = {
  /** Ledger function: one UpdateItem (and maybe one Publish) per event. */
  ledgerTimeoutSeconds: 30,
  /** Status function: two GetItem at most. */
  statusTimeoutSeconds: 10,
  /**
   * Concurrency reserved for (and the most allowed to) the status function: a flood of status
   * requests, signed by any principal allowed to call the URL, cannot take the account's
   * concurrency from the send and ledger functions. Two GetItem each: 5 serve hundreds per second.
   */
  statusReservedConcurrency: 5,
  memorySizeMb: 256,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  maxConcurrency: 5,
  /** Receives of one event before it moves to the ledger's DLQ. */
  maxReceiveCount: 5,
} as const;

export interface SendLedgerProps {
  readonly settings: ResolvedSettings;
  readonly removalPolicy: RemovalPolicy;
  readonly runtime: lambda.Runtime;
  /**
   * The send function's idempotency table: the status lookup reads it when no event came in yet,
   * and the ledger function reads a key's claim to bind events to its sends.
   */
  readonly idempotencyTable: dynamodb.ITable;
  /**
   * The send function's role: SES names it (by role name) in each event's `ses:caller-identity`
   * tag, and the ledger function takes only events of its sends.
   */
  readonly senderRole: iam.IRole;
  /** Powertools service name of the ledger and status functions' logs. */
  readonly serviceName: string;
  /** Who may subscribe to the delivery-status topic (the pipeline's publishers). */
  readonly subscriberPrincipals: readonly iam.IPrincipal[];
  /** Encrypts the ledger and status functions' logs, as the send function's. @default the default encryption */
  readonly logsKey?: kms.IKey;
  /** The names of the ledger and status functions' log groups (the logs key names them). */
  readonly logGroupNames: { readonly ledger: string; readonly status: string };
  /**
   * Encrypts the ledger table, as the idempotency table; the functions get what they need on it.
   * @default the AWS-managed key (`aws/dynamodb`)
   */
  readonly tableKey?: kms.IKey;
}

/** See the module comment. */
export class SendLedger extends Construct {
  /**
   * The configuration set every send uses: owned by this construct, unless
   * the `configurationSetName` setting names an existing one, which then only
   * gains this construct's event destination.
   */
  public readonly configurationSetName: string;
  /** The owned configuration set; undefined when a given one is used. */
  public readonly configurationSet?: ses.ConfigurationSet;
  /** SES publishes the events here. */
  public readonly eventsTopic: sns.Topic;
  /** Between the events topic and the ledger function (SNS envelope). */
  public readonly bufferQueue: sqs.Queue;
  /** Events the ledger function could not record after {@link LEDGER_FUNCTIONS}.maxReceiveCount receives. */
  public readonly bufferDeadLetterQueue: sqs.Queue;
  /** One item per dedupe key: SES MessageId, status, timeline. */
  public readonly table: dynamodb.Table;
  /** Every status change, with `status` and `idempotency-key` message attributes. */
  public readonly deliveryStatusTopic: sns.Topic;
  public readonly ledgerFunction: lambda.Function;
  public readonly statusFunction: lambda.Function;
  /** `GET <url>deliveries/{key}`, SigV4-signed (AWS_IAM). */
  public readonly statusUrl: lambda.FunctionUrl;
  /** Encrypts both topics (SES may use it to publish events). */
  public readonly topicKey: kms.Key;
  /** Encrypts the buffer queue and its DLQ (its policy names the events topic). */
  public readonly queueKey: kms.Key;

  constructor(scope: Construct, id: string, props: SendLedgerProps) {
    super(scope, id);
    const { settings, removalPolicy } = props;

    // --- configuration set ------------------------------------------------
    let configurationSet: ses.IConfigurationSet;
    if (settings.configurationSetName !== undefined) {
      configurationSet = ses.ConfigurationSet.fromConfigurationSetName(
        this,
        'GivenConfigurationSet',
        settings.configurationSetName,
      );
    } else {
      this.configurationSet = new ses.ConfigurationSet(this, 'ConfigurationSet', { reputationMetrics: true });
      configurationSet = this.configurationSet;
    }
    this.configurationSetName = configurationSet.configurationSetName;

    // --- keys, topics, buffer ----------------------------------------------
    this.topicKey = new kms.Key(this, 'TopicKey', {
      description: 'Encrypts the send ledger topics (SES events, delivery status)',
      enableKeyRotation: true,
      removalPolicy,
    });
    // SES publishes events to the encrypted topic, for this configuration set of this account
    // only: the same conditions as the topic policy the event destination adds for sns:Publish.
    // Without them, SES sending for any configuration set of any account could use the key.
    const stack = Stack.of(this);
    this.topicKey.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'SesPublishesEvents',
        principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: {
            'aws:SourceAccount': stack.account,
            'aws:SourceArn': stack.formatArn({
              service: 'ses',
              resource: 'configuration-set',
              resourceName: this.configurationSetName,
            }),
          },
        },
      }),
    );
    this.queueKey = new kms.Key(this, 'QueueKey', {
      description: 'Encrypts the send ledger buffer queue and its dead-letter queue',
      enableKeyRotation: true,
      removalPolicy,
    });

    this.eventsTopic = new sns.Topic(this, 'EventsTopic', { masterKey: this.topicKey, enforceSSL: true });
    new ses.ConfigurationSetEventDestination(this, 'EventDestination', {
      configurationSet,
      destination: ses.EventDestination.snsTopic(this.eventsTopic),
      events: [...LEDGER_EVENT_TYPES],
    });
    // Counts for the dashboard, per configuration set (SES's own auto-tag as the dimension).
    new ses.ConfigurationSetEventDestination(this, 'MetricsDestination', {
      configurationSet,
      destination: ses.EventDestination.cloudWatchDimensions([
        {
          name: CONFIGURATION_SET_DIMENSION,
          source: ses.CloudWatchDimensionSource.MESSAGE_TAG,
          defaultValue: 'none',
        },
      ]),
      events: [...DELIVERY_METRIC_EVENTS],
    });

    this.bufferDeadLetterQueue = new sqs.Queue(this, 'BufferDeadLetterQueue', {
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
    });
    this.bufferQueue = new sqs.Queue(this, 'BufferQueue', {
      // 6 x the function timeout, as for the work queue.
      visibilityTimeout: Duration.seconds(6 * LEDGER_FUNCTIONS.ledgerTimeoutSeconds),
      // An event waits as long as SQS allows: a ledger outage loses nothing.
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      deadLetterQueue: { queue: this.bufferDeadLetterQueue, maxReceiveCount: LEDGER_FUNCTIONS.maxReceiveCount },
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
    });
    // The SNS envelope, not raw: the ledger function reads SES's event from its Message. An event
    // SNS cannot deliver (a policy or key refusal) lands in the buffer's DLQ instead of being lost.
    this.eventsTopic.addSubscription(
      new SqsSubscription(this.bufferQueue, { rawMessageDelivery: false, deadLetterQueue: this.bufferDeadLetterQueue }),
    );
    this.restrictBufferSenders();

    this.deliveryStatusTopic = new sns.Topic(this, 'DeliveryStatusTopic', {
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    for (const principal of props.subscriberPrincipals) this.deliveryStatusTopic.grantSubscribe(principal);

    // --- ledger table -------------------------------------------------------
    this.table = new dynamodb.Table(this, 'Table', protectedTableProps(LEDGER_TABLE, removalPolicy, props.tableKey));

    // --- functions ----------------------------------------------------------
    const common = {
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_LOG_LEVEL: settings.logLevel,
      POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
      [LEDGER_ENV.tableName]: this.table.tableName,
      NODE_OPTIONS: '--enable-source-maps',
    };
    this.ledgerFunction = this.createFunction('Ledger', props, {
      asset: 'ledger',
      logGroupName: props.logGroupNames.ledger,
      timeoutSeconds: LEDGER_FUNCTIONS.ledgerTimeoutSeconds,
      description: 'Records SES events per dedupe key in the send ledger and publishes status changes',
      environment: {
        ...common,
        ...ledgerEnvironment(settings, {
          tableName: this.table.tableName,
          deliveryStatusTopicArn: this.deliveryStatusTopic.topicArn,
          origin: {
            eventsTopicArn: this.eventsTopic.topicArn,
            accountId: stack.account,
            configurationSetName: this.configurationSetName,
            senderRoleName: props.senderRole.roleName,
          },
          idempotencyTableName: props.idempotencyTable.tableName,
        }),
      },
    });
    this.ledgerFunction.addEventSource(
      new SqsEventSource(this.bufferQueue, {
        batchSize: LEDGER_FUNCTIONS.batchSize,
        maxBatchingWindow: Duration.seconds(LEDGER_FUNCTIONS.maxBatchingWindowSeconds),
        maxConcurrency: LEDGER_FUNCTIONS.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    this.ledgerFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'LedgerItems',
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
      }),
    );
    // A key's claim holds the attempt ids of its sends: an event binds to a send only through one.
    this.ledgerFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'ReadSendClaims',
        actions: ['dynamodb:GetItem'],
        resources: [props.idempotencyTable.tableArn],
      }),
    );
    if (props.tableKey) this.ledgerFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'write'));
    // Only the ledger function speaks on the status topic: a subscriber can trust what it reads.
    this.deliveryStatusTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheLedgerPublishes',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['sns:Publish'],
        resources: [this.deliveryStatusTopic.topicArn],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': this.ledgerFunction.role!.roleArn } },
      }),
    );
    // Publishing to an encrypted topic needs a data key (no GenerateDataKey* wildcard).
    this.ledgerFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'PublishStatusChanges',
        actions: ['sns:Publish'],
        resources: [this.deliveryStatusTopic.topicArn],
      }),
    );
    this.ledgerFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'EncryptStatusChanges',
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [this.topicKey.keyArn],
      }),
    );

    this.statusFunction = this.createFunction('Status', props, {
      asset: 'status',
      logGroupName: props.logGroupNames.status,
      timeoutSeconds: LEDGER_FUNCTIONS.statusTimeoutSeconds,
      reservedConcurrency: LEDGER_FUNCTIONS.statusReservedConcurrency,
      description: 'GET /deliveries/{key}: the delivery status of a dedupe key',
      environment: {
        ...common,
        [ENV.tableName]: props.idempotencyTable.tableName,
        [ENV.keyPrefix]: settings.idempotencyKeyPrefix,
      },
    });
    this.statusFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'ReadDeliveries',
        actions: ['dynamodb:GetItem'],
        resources: [this.table.tableArn, props.idempotencyTable.tableArn],
      }),
    );
    if (props.tableKey) this.statusFunction.addToRolePolicy(tableKeyStatement('UseTableKey', props.tableKey, 'read'));
    this.statusUrl = this.statusFunction.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
    acknowledgeServerlessRules({
      deadLetterQueues: [this.bufferDeadLetterQueue],
      functions: [this.ledgerFunction, this.statusFunction],
    });
  }

  /**
   * Queue policies of the buffer and its DLQ: only the events topic (SNS delivering SES's events)
   * may send to the buffer, and only the events topic (what SNS could not deliver) and the buffer's
   * own redrive to its DLQ. A Deny with no exemption, not even for operators: whatever reaches the
   * buffer, the ledger records as SES's word, and that decides whether an email is sent again.
   */
  private restrictBufferSenders(): void {
    onlyTheseSend(this.bufferQueue, 'OnlyTheEventsTopicSends', { 'aws:SourceArn': [this.eventsTopic.topicArn] });
    onlyTheseSend(this.bufferDeadLetterQueue, 'OnlyTheEventsTopicDeadLetters', {
      'aws:SourceArn': [this.eventsTopic.topicArn, this.bufferQueue.queueArn],
    });
  }

  /** Lets `grantee` call `GET /deliveries/{key}` (lambda:InvokeFunctionUrl and the InvokeFunction it implies). */
  public grantStatusRead(grantee: iam.IGrantable): iam.Grant {
    return this.statusUrl.grantInvokeUrl(grantee);
  }

  /**
   * What the send function needs: SendEmail with the configuration set (the
   * caller's statement pins identity and sender), and the ledger item of a key
   * (read before a resend, marked when the key is dead-lettered).
   */
  public grantSender(fn: lambda.Function): void {
    fn.addEnvironment(ENV.configurationSetName, this.configurationSetName);
    fn.addEnvironment(LEDGER_ENV.tableName, this.table.tableName);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'LedgerConfirmAndMark',
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
      }),
    );
  }

  /** One function with its own role and log group (no AWSLambdaBasicExecutionRole). */
  private createFunction(
    id: string,
    props: SendLedgerProps,
    spec: {
      /** The pre-built bundle (lib/construct/assets.ts). */
      readonly asset: LambdaName;
      readonly logGroupName: string;
      readonly timeoutSeconds: number;
      /** @default none: the account's unreserved concurrency */
      readonly reservedConcurrency?: number;
      readonly description: string;
      readonly environment: Record<string, string>;
    },
  ): lambda.Function {
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      logGroupName: spec.logGroupName,
      retention: props.settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
      ...(props.logsKey ? { encryptionKey: props.logsKey } : {}),
    });
    const role = new iam.Role(this, `${id}FunctionRole`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the email pipeline ${id.toLowerCase()} function`,
    });
    logGroup.grantWrite(role);
    return new lambda.Function(this, `${id}Function`, {
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
}
