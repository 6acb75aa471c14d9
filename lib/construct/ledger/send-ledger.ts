/**
 * The send ledger's infrastructure: SES configuration set and its EventBridge
 * destination (the default bus) -> a rule on SES's events of this set ->
 * encrypted buffer queue (+ DLQ) -> ledger function -> ledger table and
 * delivery-status topic; the status function behind an IAM-authenticated
 * function URL (`GET /deliveries/{key}`), and the cancel function behind one
 * of its own (`DELETE /deliveries/{key}`, the cancel principals only).
 *
 * {@link EmailPipeline} creates one of these; it is a construct of its own so
 * the pipeline's code stays about sending. It only composes: events.ts (the
 * configuration set, the topic key, the events rule), buffer.ts, functions.ts
 * and resource-policies.ts build the parts.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as ses from 'aws-cdk-lib/aws-ses';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LEDGER_STATUS_INDEX, LEDGER_TABLE } from '../../../lambdas/kernel/ledger/schema';
import { ENV, LEDGER_ENV } from '../../../lambdas/kernel/environment';
import type { ResolvedSettings } from '../../settings';
import { rotatingKey } from '../common/keys';
import { acknowledgeServerlessRules } from '../common/nag';
import { protectedTableProps } from '../common/tables';
import { buildBuffer } from './buffer';
import { buildConfigurationSet, buildEventRule, buildLedgerTopicKey } from './events';
import { LEDGER_FUNCTIONS, buildCancelFunction, buildLedgerFunction, buildStatusFunction } from './functions';
import { principalArn } from '../pipeline/principals';
import { restrictBufferSenders, restrictStatusPublishers } from './resource-policies';
import { buildTeamUrls, type TeamUrls } from './team-urls';

export { CONFIGURATION_SET_DIMENSION, DELIVERY_METRIC_EVENTS, LEDGER_EVENT_TYPES } from './events';
export { LEDGER_FUNCTIONS };

/** What the pipeline gives its ledger: its settings, and the send side the ledger binds events to. */
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
  /**
   * SES's events of the configuration set, on the default event bus, to {@link bufferQueue}: the
   * only sender the buffer's policy admits.
   */
  public readonly eventsRule: events.Rule;
  /** Between SES's events rule and the ledger function (EventBridge events). */
  public readonly bufferQueue: sqs.Queue;
  /** Events the ledger function could not record after {@link LEDGER_FUNCTIONS}.maxReceiveCount receives. */
  public readonly bufferDeadLetterQueue: sqs.Queue;
  /** One item per dedupe key: SES MessageId, status, timeline. */
  public readonly table: dynamodb.Table;
  /** Every status change, with `status` and `idempotency-key` message attributes. */
  public readonly deliveryStatusTopic: sns.Topic;
  public readonly ledgerFunction: lambda.Function;
  /**
   * The ledger function's mapping of {@link bufferDeadLetterQueue}, created disabled: `email-pipeline
   * dlq redrive --queue ledger` enables it until the DLQ is drained, then disables it. Its UUID and
   * its ARN (what the redrive role may update).
   */
  public readonly deadLetterMapping: { readonly id: string; readonly arn: string };
  public readonly statusFunction: lambda.Function;
  /** `GET <url>deliveries/{key}`, SigV4-signed (AWS_IAM): reads only, whoever calls it. */
  public readonly statusUrl: lambda.FunctionUrl;
  /** Cancels keys not yet sent; only what its URL lets through reaches it. */
  public readonly cancelFunction: lambda.Function;
  /** `DELETE <url>deliveries/{key}`, SigV4-signed (AWS_IAM): invoked by the principals granted {@link grantCancel} only. */
  public readonly cancelUrl: lambda.FunctionUrl;
  /** Each team's own status and cancel URLs, for the teams that list `statusReaders` or `cancelers` (team-urls.ts). */
  public readonly teamUrls: Readonly<Record<string, TeamUrls>>;
  /** Encrypts the delivery-status topic. */
  public readonly topicKey: kms.Key;
  /** Encrypts the buffer queue and its DLQ (EventBridge may use it for the rule's deliveries). */
  public readonly queueKey: kms.Key;

  constructor(scope: Construct, id: string, props: SendLedgerProps) {
    super(scope, id);
    const { settings, removalPolicy } = props;

    // --- configuration set ------------------------------------------------
    const { configurationSet, configurationSetName, ownedConfigurationSet } = buildConfigurationSet(this, settings);
    this.configurationSet = ownedConfigurationSet;
    this.configurationSetName = configurationSetName;

    // --- keys, topics, buffer ----------------------------------------------
    this.topicKey = buildLedgerTopicKey(this, { removalPolicy });
    this.queueKey = rotatingKey(
      this,
      'QueueKey',
      'Encrypts the send ledger buffer queue and its dead-letter queue',
      removalPolicy,
    );
    const buffer = buildBuffer(this, { queueKey: this.queueKey });
    this.bufferDeadLetterQueue = buffer.bufferDeadLetterQueue;
    this.bufferQueue = buffer.bufferQueue;
    this.eventsRule = buildEventRule(this, { configurationSet, configurationSetName, ...buffer });
    restrictBufferSenders({ rule: this.eventsRule, ...buffer });

    this.deliveryStatusTopic = new sns.Topic(this, 'DeliveryStatusTopic', {
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    for (const principal of props.subscriberPrincipals) this.deliveryStatusTopic.grantSubscribe(principal);

    // --- ledger table -------------------------------------------------------
    this.table = new dynamodb.Table(this, 'Table', protectedTableProps(LEDGER_TABLE, removalPolicy, props.tableKey));
    // Keys by outcome for `email-pipeline deliveries`: keys only (the smallest index write), one
    // more write per ledger write (two when an item moves between partitions or sort keys). Keep
    // the projection: CloudFormation replaces an index whose projection changes, and `deliveries
    // --team` reads the listed items' `team` instead (lib/cli/deliveries.ts).
    this.table.addGlobalSecondaryIndex({
      indexName: LEDGER_STATUS_INDEX.indexName,
      partitionKey: { name: LEDGER_STATUS_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: LEDGER_STATUS_INDEX.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });

    // --- functions ----------------------------------------------------------
    const common = {
      settings,
      removalPolicy,
      runtime: props.runtime,
      serviceName: props.serviceName,
      ...(props.logsKey ? { logsKey: props.logsKey } : {}),
      ...(props.tableKey ? { tableKey: props.tableKey } : {}),
      table: this.table,
      idempotencyTable: props.idempotencyTable,
    };
    const ledger = buildLedgerFunction(this, {
      ...common,
      logGroupName: props.logGroupNames.ledger,
      bufferQueue: this.bufferQueue,
      bufferDeadLetterQueue: this.bufferDeadLetterQueue,
      deliveryStatusTopic: this.deliveryStatusTopic,
      topicKey: this.topicKey,
      configurationSetName,
      senderRole: props.senderRole,
    });
    this.ledgerFunction = ledger.ledgerFunction;
    this.deadLetterMapping = {
      id: ledger.deadLetterSource.eventSourceMappingId,
      arn: ledger.deadLetterSource.eventSourceMappingArn,
    };
    restrictStatusPublishers(this.deliveryStatusTopic, this.ledgerFunction);
    const status = buildStatusFunction(this, { ...common, logGroupName: props.logGroupNames.status });
    this.statusFunction = status.statusFunction;
    this.statusUrl = status.statusUrl;
    const cancel = buildCancelFunction(this, { ...common, logGroup: status.logGroup });
    this.cancelFunction = cancel.cancelFunction;
    this.cancelUrl = cancel.cancelUrl;
    this.teamUrls = buildTeamUrls({
      teams: props.settings.teams ?? {},
      statusFunction: this.statusFunction,
      cancelFunction: this.cancelFunction,
    });
    acknowledgeServerlessRules({
      deadLetterQueues: [this.bufferDeadLetterQueue],
      functions: [this.ledgerFunction, this.statusFunction, this.cancelFunction],
    });
  }

  /**
   * Lets `grantee` call `GET /deliveries/{key}` (lambda:InvokeFunctionUrl and the InvokeFunction it
   * implies, via the URL only). Never a cancel: the status function reads only, whatever the method.
   */
  public grantStatusRead(grantee: iam.IGrantable): iam.Grant {
    return this.statusUrl.grantInvokeUrl(grantee);
  }

  /**
   * Lets `principal` cancel keys, `DELETE /deliveries/{key}` at the cancel URL, and read them at the
   * status URL: each URL's invoke grant (via the URL only). IAM alone decides who may cancel: no
   * other principal is granted the cancel URL. A role (`IRole`, or `ArnPrincipal` with a role ARN)
   * or a user (`ArnPrincipal`); not an account, which would open it to every principal IAM lets in.
   */
  public grantCancel(principal: iam.IPrincipal): iam.Grant {
    principalArn(principal, 'cancelPrincipals');
    this.statusUrl.grantInvokeUrl(principal);
    return this.cancelUrl.grantInvokeUrl(principal);
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
}
