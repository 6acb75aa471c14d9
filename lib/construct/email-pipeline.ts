/**
 * The EmailPipeline construct: SNS topic -> SQS queue -> send function -> DynamoDB
 * idempotency record + SES v2, with its DLQs, keys, policies and the send ledger; mail not yet
 * due waits in a schedule queue of its own, moved on by the schedule function.
 * It only composes: each part is built by a function of its own in pipeline/
 * (queues, topic, idempotency store, logs, send and schedule functions, grants,
 * redrive role, resource policies) or is a construct of its own (ledger/SendLedger).
 */
import { CfnOutput, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as ses from 'aws-cdk-lib/aws-ses';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ResolvedSettings, resolveSettings } from '../settings';
import { configuredCallbacks } from '../settings/callbacks';
import { Callbacks } from './callbacks/callbacks';
import { checkAwsCallbackUrls } from './callbacks/urls';
import type { EmailPipelineProps } from './email-pipeline-props';
import { DeliveryContractValidation } from './delivery-contract';
import { SendLedger } from './ledger/send-ledger';
import { buildAttachmentsBucket } from './pipeline/attachments-bucket';
import { PIPELINE_MARKER, endpointsJson, pathInStack, pipelineEndpointValues } from './pipeline/endpoints';
import { buildFunctionLogs, type LogGroupNames } from './pipeline/function-logs';
import { grantSendFunctionLeastPrivilege, grantTableReads } from './pipeline/grants';
import { buildIdempotencyStore } from './pipeline/idempotency-store';
import { checkContextApplied, propsFromContext, type ContextProps } from './pipeline/context-props';
import { checkConstructOptions } from './pipeline/options';
import { buildQueues } from './pipeline/queues';
import { buildRedriveRole } from './pipeline/redrive-role';
import { buildScheduleFunction } from './pipeline/schedule-function';
import * as policies from './pipeline/resource-policies';
import { buildSendFunction } from './pipeline/send-function';
import { buildTeamTenants, tenantNames } from './pipeline/team-tenants';
import { buildTenantStatus, type TenantStatusEvents } from './pipeline/tenant-status';
import {
  buildTeamTopics,
  restrictTeamPublishers,
  teamQueueSenders,
  teamRoutes,
  type TeamTopics,
} from './pipeline/team-topics';
import { buildTopics } from './pipeline/topic';
import { rotatingKey } from './common/keys';
import { acknowledgeServerlessRules } from './common/nag';
import { DEFAULT_SERVICE_NAME, RUNTIME } from './common/runtime';

export { principalsFromStrings } from './pipeline/principals';
export type { ContextProps } from './pipeline/context-props';
export type { EmailPipelineProps } from './email-pipeline-props';

/**
 * SNS topic -> SQS queue (SNS envelope) -> Lambda (batches, partial batch
 * response) -> DynamoDB idempotency record + SES v2 SendEmail, with a DLQ.
 *
 * Every setting is resolved and checked by {@link resolveSettings}; the
 * invariants that an escape hatch could still break (raw message delivery,
 * batch item failure reporting) are checked again on the synthesized
 * resources.
 */
export class EmailPipeline extends Construct {
  /** Publishers send here. */
  public readonly topic: sns.Topic;
  /** High-priority publishers send here ({@link grantPublishHighPriority}): the high-priority queue's only source. */
  public readonly highPriorityTopic: sns.Topic;
  /** The work queue, subscribed to {@link topic} with the SNS envelope. */
  public readonly queue: sqs.Queue;
  /** Each team's own queue, by team name, fed by its topic (its own event source mapping); empty without teams. */
  public readonly teamQueues: Readonly<Record<string, sqs.Queue>>;
  /** Each team's topics, by team name (the `teams` setting); empty without teams. */
  public readonly teamTopics: Readonly<Record<string, TeamTopics>>;
  /** Each team's SES tenant, for the teams with `sesTenant` (none without: team-tenants.ts). */
  public readonly teamTenants: Readonly<Record<string, ses.CfnTenant>>;
  /** SES's sending status events of the teams' tenants: rules and log group (tenant-status.ts); none without tenants. */
  public readonly tenantStatus?: TenantStatusEvents;
  /** The high-priority queue: {@link highPriorityTopic}'s messages, its own event source mapping. */
  public readonly highPriorityQueue: sqs.Queue;
  /** Permanent failures (sent by the handler) and messages past maxReceiveCount. */
  public readonly deadLetterQueue: sqs.Queue;
  /** Deliveries SNS could not make to the work queue (the subscription's redrive policy). */
  public readonly subscriptionDeadLetterQueue: sqs.Queue;
  /** Mail not yet due waits here, off both lanes' queues: {@link scheduleFunction}'s source. */
  public readonly scheduleQueue: sqs.Queue;
  /** Moves scheduled mail on, one hop after another, and a due copy to its lane's queue. */
  public readonly scheduleFunction: lambda.Function;
  /** Customer-managed key (rotation on) of the function's logs, unless `encryptLogs` is false. */
  public readonly logsKey?: kms.Key;
  /** Powertools idempotency records, one per dedupe key. */
  public readonly table: dynamodb.Table;
  /**
   * Customer-managed key (rotation on) of both tables, unless
   * `customerManagedTableKey` is false. See {@link grantStatusLookup}.
   */
  public readonly tableKey?: kms.Key;
  /** The send-email function (its code is the package's pre-built bundle). */
  public readonly sendFunction: lambda.Function;
  /** The function's log group. */
  public readonly logGroup: logs.LogGroup;
  /**
   * The names of the functions' log groups (send, ledger, status; callbacks when configured), fixed
   * at synth: `/email-pipeline/<unique id of this construct>/<function>`. The logs key serves these only.
   */
  public readonly logGroupNames: LogGroupNames;
  /** The function's execution role (no managed policies). */
  public readonly role: iam.Role;
  /**
   * The operators' role for the DLQ: list, redrive (native move task or copy)
   * and purge it with the CLI. The queue policies exempt it by ARN; see
   * {@link EmailPipelineProps.redriveRoleAssumedBy} for who may assume it.
   */
  public readonly redriveRole: iam.Role;
  /** Customer-managed key (rotation on) of the topic. */
  public readonly topicKey: kms.Key;
  /**
   * Customer-managed key (rotation on) of the queue and the DLQ. Separate from
   * {@link topicKey}: its policy names the topic (SNS may use it only for this
   * topic), and one key for both would make the topic and the key depend on
   * each other.
   */
  public readonly queueKey: kms.Key;
  /** The send ledger: configuration set, SES events, ledger table, status topic and status URL. */
  public readonly ledger: SendLedger;
  /**
   * The callbacks (every status change POSTed, signed, to `callbackUrl` and the teams' own): the
   * callbacks table, queue and DLQ, the callback function and a signing secret per callback.
   * Undefined when no callback is configured: the template then holds none of it.
   */
  public readonly callbacks?: Callbacks;
  /** The settings with every default applied. */
  public readonly settings: ResolvedSettings;
  /** The Powertools service name (`service` dimension of the custom metrics). */
  public readonly serviceName: string;
  /**
   * Attachments sent by `s3Key` (contract v1.2): KMS (its own key), TLS only, no public access,
   * objects expire after the dedupe window; the send function alone reads, see {@link grantAttachmentUpload}.
   */
  public readonly attachmentsBucket: s3.Bucket;
  /** Customer-managed key (rotation on) of {@link attachmentsBucket}. */
  public readonly attachmentsKey: kms.Key;
  /**
   * This pipeline's path inside its stack (`Billing`, `Mail/Billing`): what `email-pipeline
   * --pipeline` names. The pipeline's `Endpoints` output carries it.
   */
  public readonly pathInStack: string;
  readonly #grantUpload: (grantee: iam.IGrantable, team?: string) => iam.Grant;
  /** Lists one more high-priority publisher (the high-priority topic's policy). */
  readonly #grantHighPriority: (principal: iam.IPrincipal) => iam.Grant;
  readonly #admitPublisher: (principal: iam.IPrincipal) => iam.Grant;

  /**
   * The pipeline's props from the CDK context of `scope` (cdk.json `context`, `-c
   * emailPipeline:key=value`), read as the repository's app reads them: every `emailPipeline:`
   * key is checked, an unknown one fails with the closest known key, `senderAddress` and
   * `sesIdentity` are required, principal lists become principals. Spread it and override what
   * your code sets: `new EmailPipeline(this, 'Mail', { ...EmailPipeline.propsFromContext(this),
   * removalPolicy })`. Throws a SettingsError naming the key.
   */
  public static propsFromContext(scope: Construct): ContextProps {
    return propsFromContext(scope);
  }

  constructor(scope: Construct, id: string, props: EmailPipelineProps) {
    super(scope, id);
    const settings = resolveSettings(props);
    this.settings = settings;
    // Nothing typed in the context is silently ignored: unknown keys throw, unapplied ones warn.
    checkContextApplied(this, { ...props, ...settings, teams: props.teams }, (name) => name !== 'alarmEmail');
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.serviceName = props.serviceName ?? DEFAULT_SERVICE_NAME;
    checkConstructOptions(props);
    // On AWS a callback URL is https:// and names no address of this side's own network.
    checkAwsCallbackUrls(settings);

    // --- encryption, queues and topic ------------------------------------
    this.topicKey = rotatingKey(this, 'TopicKey', 'Encrypts the email pipeline topic', removalPolicy);
    const queues = buildQueues(this, { settings, removalPolicy });
    this.queueKey = queues.queueKey;
    this.deadLetterQueue = queues.deadLetterQueue;
    this.queue = queues.queue;
    this.highPriorityQueue = queues.highPriorityQueue;
    this.subscriptionDeadLetterQueue = queues.subscriptionDeadLetterQueue;
    this.scheduleQueue = queues.scheduleQueue;
    this.teamQueues = queues.teamQueues;
    const topics = buildTopics(this, { ...queues, topicKey: this.topicKey });
    this.topic = topics.topic;
    this.highPriorityTopic = topics.highPriorityTopic;
    const publishers = props.publisherPrincipals ?? [new iam.AccountRootPrincipal()];
    this.#admitPublisher = policies.restrictPublishers(this.topic, publishers);
    const teams = settings.teams ?? {};
    this.teamTopics = buildTeamTopics(this, { ...queues, teams, topicKey: this.topicKey });

    // --- idempotency store ------------------------------------------------
    const store = buildIdempotencyStore(this, {
      removalPolicy,
      customerManagedTableKey: props.customerManagedTableKey ?? true,
    });
    this.tableKey = store.tableKey;
    this.table = store.table;

    // --- function ----------------------------------------------------------
    const functionLogs = buildFunctionLogs(this, { settings, removalPolicy, encryptLogs: props.encryptLogs ?? true });
    this.logGroupNames = functionLogs.logGroupNames;
    this.logsKey = functionLogs.logsKey;
    this.logGroup = functionLogs.logGroup;
    const attachments = buildAttachmentsBucket(this, { settings, removalPolicy });
    this.attachmentsBucket = attachments.bucket;
    this.attachmentsKey = attachments.key;
    const routes = settings.teams
      ? { teams: teamRoutes(this.teamTopics, settings.teams, tenantNames(this, teams), queues.teamQueues) }
      : {};
    const send = buildSendFunction(this, {
      settings,
      attachmentsBucketName: this.attachmentsBucket.bucketName,
      serviceName: this.serviceName,
      logGroup: this.logGroup,
      topic: this.topic,
      highPriorityTopic: this.highPriorityTopic,
      table: this.table,
      queue: this.queue,
      highPriorityQueue: this.highPriorityQueue,
      scheduleQueue: this.scheduleQueue,
      deadLetterQueue: this.deadLetterQueue,
      ...routes,
      teamQueues: queues.teamQueues,
    });
    this.role = send.role;
    restrictTeamPublishers(this.teamTopics, teams, this.role);
    this.sendFunction = send.sendFunction;
    const schedule = buildScheduleFunction(this, {
      ...queues,
      ...routes,
      settings,
      serviceName: this.serviceName,
      logGroup: this.logGroup,
    });
    this.scheduleFunction = schedule.scheduleFunction;
    const highPublishers = props.highPriorityPublisherPrincipals ?? [];
    this.#grantHighPriority = policies.restrictHighPriorityPublishers(
      this.highPriorityTopic,
      highPublishers,
      this.role,
    );
    this.#grantUpload = attachments.restrict(this.role);

    // --- send ledger (SES events, delivery status) ---------------------------
    this.ledger = new SendLedger(this, 'Ledger', {
      settings,
      removalPolicy,
      runtime: RUNTIME,
      idempotencyTable: this.table,
      senderRole: this.role,
      serviceName: this.serviceName,
      subscriberPrincipals: publishers,
      logGroupNames: { ledger: this.logGroupNames.ledger, status: this.logGroupNames.status },
      ...(this.logsKey ? { logsKey: this.logsKey } : {}),
      ...(this.tableKey ? { tableKey: this.tableKey } : {}),
    });
    this.ledger.grantSender(this.sendFunction);
    this.teamTenants = buildTeamTenants(this, {
      teams,
      sesIdentity: settings.sesIdentity,
      configurationSetName: this.ledger.configurationSetName,
      ...(props.sesTemplateNames ? { templateNames: props.sesTemplateNames } : {}),
    });
    // No send names a tenant before it exists.
    for (const tenant of Object.values(this.teamTenants)) this.sendFunction.node.addDependency(tenant);
    // Named (function-logs.ts) exactly when a team has a tenant.
    const tenantLogs = this.logGroupNames.tenantStatus;
    this.tenantStatus =
      tenantLogs === undefined
        ? undefined
        : buildTenantStatus(this, {
            tenants: this.teamTenants,
            logGroupName: tenantLogs,
            logRetentionDays: settings.logRetentionDays,
            removalPolicy,
            ...(this.logsKey ? { logsKey: this.logsKey } : {}),
          });
    for (const principal of props.cancelPrincipals ?? []) this.ledger.grantCancel(principal);

    // --- permissions and policies ------------------------------------------
    grantSendFunctionLeastPrivilege(this.sendFunction, {
      settings,
      role: this.role,
      table: this.table,
      ...(this.tableKey ? { tableKey: this.tableKey } : {}),
      queue: this.queue,
      highPriorityQueue: this.highPriorityQueue,
      teamQueues: this.teamQueues,
      scheduleQueue: this.scheduleQueue,
      deadLetterQueue: this.deadLetterQueue,
      queueKey: this.queueKey,
      configurationSetName: this.ledger.configurationSetName,
      ...(props.sesTemplateNames ? { sesTemplateNames: props.sesTemplateNames } : {}),
      tenantArns: Object.values(this.teamTenants).map((tenant) => tenant.attrArn),
    });
    this.redriveRole = buildRedriveRole(this, {
      assumedBy: props.redriveRoleAssumedBy,
      redrivePrincipals: props.redrivePrincipals ?? [],
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      subscriptionDeadLetterQueue: this.subscriptionDeadLetterQueue,
      queueKey: this.queueKey,
      ledger: this.ledger,
    });
    const callbacks = configuredCallbacks(settings);
    if (Object.keys(callbacks).length > 0) {
      this.callbacks = new Callbacks(this, 'Callbacks', {
        settings,
        callbacks,
        removalPolicy,
        serviceName: this.serviceName,
        deliveryStatusTopic: this.ledger.deliveryStatusTopic,
        logGroupName: this.logGroupNames.callbacks!,
        ...(this.logsKey ? { logsKey: this.logsKey } : {}),
        ...(this.tableKey ? { tableKey: this.tableKey } : {}),
        redrivePrincipals: [this.redriveRole, ...(props.redrivePrincipals ?? [])],
        sendFunction: this.sendFunction,
      });
      this.callbacks.grantRedrive(this.redriveRole, this.tableKey);
    }
    policies.restrictQueueSenders({
      topic: this.topic,
      highPriorityTopic: this.highPriorityTopic,
      queue: this.queue,
      highPriorityQueue: this.highPriorityQueue,
      scheduleQueue: this.scheduleQueue,
      deadLetterQueue: this.deadLetterQueue,
      subscriptionDeadLetterQueue: this.subscriptionDeadLetterQueue,
      senderRole: this.role,
      scheduleRole: schedule.role,
      redrivePrincipals: [this.redriveRole, ...(props.redrivePrincipals ?? [])],
      ...teamQueueSenders(this.teamTopics, this.teamQueues),
    });
    acknowledgeServerlessRules({
      deadLetterQueues: [this.deadLetterQueue, this.subscriptionDeadLetterQueue],
      functions: [this.sendFunction, this.scheduleFunction],
    });

    for (const queue of [this.queue, this.highPriorityQueue, ...Object.values(this.teamQueues)])
      this.node.addValidation(new DeliveryContractValidation(this, queue));
    // The ledger's buffer: EventBridge's events in (no subscription), partial batch responses out.
    this.node.addValidation(new DeliveryContractValidation(this, this.ledger.bufferQueue, { fedBy: 'rule' }));

    // --- how the CLI finds this pipeline, in any stack, beside any other ------
    this.pathInStack = pathInStack(this);
    new CfnOutput(this, 'Endpoints', {
      value: endpointsJson(this, PIPELINE_MARKER, this.pathInStack, pipelineEndpointValues(this)),
      description: `Endpoints of the email pipeline ${this.pathInStack} (email-pipeline --stack STACK --pipeline ${this.pathInStack})`,
    });
  }

  /** Lets `principal` (an account, a role or an `ArnPrincipal`) publish to {@link highPriorityTopic}. */
  public grantPublishHighPriority(principal: iam.IPrincipal): iam.Grant {
    return this.#grantHighPriority(principal);
  }

  /**
   * Lets `grantee` (a role or a user: the bucket policy names it by ARN) put objects in
   * {@link attachmentsBucket} for messages to name by `s3Key`: s3:PutObject and the key's encrypt.
   * With `options.team`, under that team's prefix `<team>/` only (where its messages' `s3Key`s must
   * be), and nobody else may write there; without, anywhere but the teams' prefixes.
   */
  public grantAttachmentUpload(grantee: iam.IGrantable, options: { readonly team?: string } = {}): iam.Grant {
    return this.#grantUpload(grantee, options.team);
  }

  /**
   * Lets `principal` publish to {@link topic} (and use its key to do so), beside
   * `publisherPrincipals`: the topic policy's Deny exempts it too. An account
   * (`AccountPrincipal`), a role or an `ArnPrincipal` (a role or user ARN); a role's
   * sessions may publish.
   */
  public grantPublish(principal: iam.IPrincipal): iam.Grant {
    return this.#admitPublisher(principal);
  }

  /**
   * Lets `principal` cancel keys not yet sent at the cancel URL (and read their status): see
   * {@link EmailPipelineProps.cancelPrincipals}.
   */
  public grantCancel(principal: iam.IPrincipal): iam.Grant {
    return this.ledger.grantCancel(principal);
  }

  /**
   * Lets `grantee` look keys up as `npm run status -- --stack` does: GetItem on both tables, and
   * their key (through DynamoDB) when it is customer-managed.
   */
  public grantStatusLookup(grantee: iam.IGrantable): iam.Grant {
    return grantTableReads(grantee, [this.table, this.ledger.table], this.tableKey);
  }
}
