import { ArnFormat, Duration, Names, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { handlerCode } from './assets';
import { BUNDLING } from './bundling';
import { acknowledgeServerlessRules, onlyTheseSend, protectedTableProps, tableKeyStatement } from './shared';
import {
  DLQ_RETENTION_SECONDS,
  PipelineSettings,
  ROLE_OR_USER_ARN,
  ResolvedSettings,
  SettingsError,
  resolveSettings,
} from '../config';
import { IDEMPOTENCY_TABLE, SERVICE_NAME, handlerEnvironment } from './handler-env';
import { DeliveryContractValidation } from './delivery-contract';
import { SendLedger } from './ledger/send-ledger';

/** How long the dead-letter queue keeps a message: the SQS maximum, so operators have time to look. */
export const DLQ_RETENTION = Duration.seconds(DLQ_RETENTION_SECONDS);

/** The Lambda runtime; {@link BUNDLING}.target must name the same Node.js major version. */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * Principals from strings (settings given in CDK context): a 12-digit account
 * id becomes an {@link iam.AccountPrincipal}, an ARN an {@link iam.ArnPrincipal}.
 */
export function principalsFromStrings(values: readonly string[]): iam.IPrincipal[] {
  return values.map((value) =>
    /^\d{12}$/.test(value) ? new iam.AccountPrincipal(value) : new iam.ArnPrincipal(value),
  );
}

/** Default of {@link EmailPipelineProps.serviceName} (the local pipeline's too). */
export const DEFAULT_SERVICE_NAME = SERVICE_NAME;

/**
 * Settings of the pipeline ({@link PipelineSettings}, shared with the local
 * pipeline) plus options that only the CDK construct has.
 */
export interface EmailPipelineProps extends PipelineSettings {
  /**
   * What happens to the stateful resources (idempotency table, function log
   * group, KMS keys) when they leave the stack. With anything but RETAIN the
   * table also loses its deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * SES stored templates the function may send with. Messages name their
   * template, so the default allows every template of the account in the
   * stack's region; list the names to narrow it.
   * @default all templates in the account and region (`template/*`)
   */
  readonly sesTemplateNames?: readonly string[];
  /**
   * Powertools service name (POWERTOOLS_SERVICE_NAME); also the `service`
   * dimension of the custom metrics.
   * @default "email-pipeline"
   */
  readonly serviceName?: string;
  /**
   * Who may publish to the topic. The topic policy allows these principals and
   * denies sns:Publish to everyone else, including other principals of the
   * deploying account. Accounts (`AccountPrincipal`, `AccountRootPrincipal`),
   * roles and `ArnPrincipal`s are accepted.
   * @default the deploying account (`new iam.AccountRootPrincipal()`)
   */
  readonly publisherPrincipals?: readonly iam.IPrincipal[];
  /**
   * Who else, besides the redrive role the construct creates
   * ({@link EmailPipeline.redriveRole}), may redrive: the queue policies deny
   * sqs:SendMessage to everyone but the topic (work queue) and the function
   * (DLQ), except these principals, named by ARN (`aws:PrincipalArn`). Roles
   * (`IRole`, or `ArnPrincipal` with a role ARN: its sessions match too) and
   * users (`ArnPrincipal`). Accounts are refused: an account's ARN would
   * exempt only its root user, and a whole account is not a name. Never a tag:
   * a principal that may tag itself could give itself the exemption.
   * @default none: only the redrive role
   */
  readonly redrivePrincipals?: readonly iam.IPrincipal[];
  /**
   * Who may assume the redrive role ({@link EmailPipeline.redriveRole}): its
   * trust policy. With the default, the account decides through IAM: any of
   * its principals whose IAM policies allow `sts:AssumeRole` on the role
   * (administrators, and `PowerUserAccess`, which allows every STS action);
   * name the operators' roles to narrow it.
   * @default the deploying account (`new iam.AccountRootPrincipal()`)
   */
  readonly redriveRoleAssumedBy?: iam.IPrincipal;
  /**
   * Encrypt both tables (idempotency records, send ledger) with a customer-managed
   * key (rotation on; {@link EmailPipeline.tableKey}), which only their callers may
   * use, through DynamoDB. Turn off to use the AWS-managed key (`aws/dynamodb`),
   * which every principal of the account allowed to use DynamoDB may use.
   * @default true
   */
  readonly customerManagedTableKey?: boolean;
  /**
   * Encrypt the function's log group with a customer-managed key (rotation on).
   * Turn off to use CloudWatch Logs' default encryption.
   * @default true
   */
  readonly encryptLogs?: boolean;
}

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
  /** The work queue, subscribed to {@link topic} with the SNS envelope. */
  public readonly queue: sqs.Queue;
  /** Permanent failures (sent by the handler) and messages past maxReceiveCount. */
  public readonly deadLetterQueue: sqs.Queue;
  /** Deliveries SNS could not make to the work queue (the subscription's redrive policy). */
  public readonly subscriptionDeadLetterQueue: sqs.Queue;
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
   * The names of the three functions' log groups (send, ledger, status), fixed at synth:
   * `/email-pipeline/<unique id of this construct>/<function>`. The logs key serves these only.
   */
  public readonly logGroupNames: { readonly send: string; readonly ledger: string; readonly status: string };
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
  /** The settings with every default applied. */
  public readonly settings: ResolvedSettings;
  /** The Powertools service name (`service` dimension of the custom metrics). */
  public readonly serviceName: string;

  constructor(scope: Construct, id: string, props: EmailPipelineProps) {
    super(scope, id);
    const settings = resolveSettings(props);
    this.settings = settings;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.serviceName = props.serviceName ?? DEFAULT_SERVICE_NAME;
    checkConstructOptions(props);

    // --- encryption, queues and topic ------------------------------------
    this.topicKey = new kms.Key(this, 'TopicKey', {
      description: 'Encrypts the email pipeline topic',
      enableKeyRotation: true,
      removalPolicy,
    });
    this.queueKey = new kms.Key(this, 'QueueKey', {
      description: 'Encrypts the email pipeline queue and dead-letter queue',
      enableKeyRotation: true,
      removalPolicy,
    });

    // The work queue's name is fixed here (not generated) so that the DLQ's
    // RedriveAllowPolicy can name it without a reference cycle.
    const queueName = Names.uniqueResourceName(this, { maxLength: 74, separator: '-' }) + '-work';
    const stack = Stack.of(this);
    const queueArn = stack.formatArn({ service: 'sqs', resource: queueName, arnFormat: ArnFormat.NO_RESOURCE_NAME });
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
    });
    // Only the work queue may use this DLQ (set on the L1: the L2 would need the queue object).
    (this.deadLetterQueue.node.defaultChild as sqs.CfnQueue).redriveAllowPolicy = {
      redrivePermission: 'byQueue',
      sourceQueueArns: [queueArn],
    };

    this.queue = new sqs.Queue(this, 'Queue', {
      queueName,
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(settings.retentionPeriodSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
    });

    this.subscriptionDeadLetterQueue = new sqs.Queue(this, 'SubscriptionDeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.queueKey,
      enforceSSL: true,
    });
    Validations.of(this.subscriptionDeadLetterQueue).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason:
        "This queue is the SNS subscription's dead-letter queue (its redrive policy names it); cdk-nag recognises only SQS " +
        'redrive policies as DLQ use, and a DLQ of a DLQ would only move the same messages once more.',
    });

    this.topic = new sns.Topic(this, 'Topic', { masterKey: this.topicKey, enforceSSL: true });
    // The handler reads the SNS MessageId from the envelope: raw delivery stays off.
    // The subscription also gives SNS (this topic only) use of the key to write to the queue.
    // What SNS cannot deliver (a policy or key refusal) goes to its own DLQ instead of being lost.
    this.topic.addSubscription(
      new SqsSubscription(this.queue, {
        rawMessageDelivery: false,
        deadLetterQueue: this.subscriptionDeadLetterQueue,
      }),
    );
    const publishers = props.publisherPrincipals ?? [new iam.AccountRootPrincipal()];
    this.restrictPublishers(publishers);

    // --- idempotency store ------------------------------------------------
    if (props.customerManagedTableKey ?? true) {
      this.tableKey = new kms.Key(this, 'TableKey', {
        description: 'Encrypts the email pipeline tables (idempotency records, send ledger)',
        enableKeyRotation: true,
        removalPolicy,
      });
    }
    this.table = new dynamodb.Table(
      this,
      'IdempotencyTable',
      protectedTableProps(IDEMPOTENCY_TABLE, removalPolicy, this.tableKey),
    );

    // --- function ----------------------------------------------------------
    // The log groups' names are fixed here (not generated) so that the logs key's policy can name
    // them: a name taken from the log group itself would make the key and the group depend on each other.
    const logGroupPrefix = `/email-pipeline/${Names.uniqueResourceName(this, { maxLength: 64, separator: '-' })}`;
    this.logGroupNames = {
      send: `${logGroupPrefix}/send-email`,
      ledger: `${logGroupPrefix}/ledger`,
      status: `${logGroupPrefix}/status`,
    };
    if (props.encryptLogs ?? true) {
      this.logsKey = new kms.Key(this, 'LogsKey', {
        description: "Encrypts the email pipeline functions' logs",
        enableKeyRotation: true,
        removalPolicy,
      });
      // CloudWatch Logs may use the key for the pipeline's own log groups only, by name: not for
      // any other log group of the account, which could otherwise be encrypted (and its reading
      // tied) to this key.
      this.logsKey.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'CloudWatchLogsUseKey',
          principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
          actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
          resources: ['*'],
          conditions: {
            ArnEquals: {
              'kms:EncryptionContext:aws:logs:arn': Object.values(this.logGroupNames).map((name) =>
                stack.formatArn({
                  service: 'logs',
                  resource: 'log-group',
                  resourceName: name,
                  arnFormat: ArnFormat.COLON_RESOURCE_NAME,
                }),
              ),
            },
          },
        }),
      );
    }
    this.logGroup = new logs.LogGroup(this, 'FunctionLogs', {
      logGroupName: this.logGroupNames.send,
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy,
      ...(this.logsKey ? { encryptionKey: this.logsKey } : {}),
    });

    // The shared mapping (also used by the local pipeline), plus what only the
    // deployed function sets.
    const environment: Record<string, string> = {
      ...handlerEnvironment(settings, {
        topicArn: this.topic.topicArn,
        tableName: this.table.tableName,
        sourceQueueUrl: this.queue.queueUrl,
        deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
      }),
      POWERTOOLS_SERVICE_NAME: this.serviceName,
      NODE_OPTIONS: '--enable-source-maps',
    };

    // Own role, no AWSLambdaBasicExecutionRole: logs go to this log group only.
    this.role = new iam.Role(this, 'SendFunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the email pipeline send function',
    });
    this.logGroup.grantWrite(this.role);

    this.sendFunction = new lambda.Function(this, 'SendFunction', {
      role: this.role,
      code: handlerCode('send-email'),
      handler: 'index.handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      timeout: Duration.seconds(settings.functionTimeoutSeconds),
      memorySize: settings.memorySizeMb,
      logGroup: this.logGroup,
      environment,
      description: 'Sends each queued email once: idempotency record in DynamoDB, then SES v2 SendEmail',
    });

    this.sendFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: settings.batchSize,
        maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
        maxConcurrency: settings.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

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

    this.grantLeastPrivilege(props);
    this.redriveRole = this.createRedriveRole(props.redriveRoleAssumedBy ?? new iam.AccountRootPrincipal());
    this.restrictQueueSenders([this.redriveRole, ...(props.redrivePrincipals ?? [])]);
    acknowledgeServerlessRules({
      deadLetterQueues: [this.deadLetterQueue, this.subscriptionDeadLetterQueue],
      functions: [this.sendFunction],
    });

    this.node.addValidation(new DeliveryContractValidation(this, this.queue));
    // The ledger's buffer has the same contract: SNS envelope in, partial batch responses out.
    this.node.addValidation(new DeliveryContractValidation(this, this.ledger.bufferQueue));
  }

  /** The function's own permissions; the event source adds receive/delete on the queue. */
  private grantLeastPrivilege(props: EmailPipelineProps): void {
    const stack = Stack.of(this);
    const fn = this.sendFunction;

    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'IdempotencyRecords',
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [this.table.tableArn],
      }),
    );

    // SES v2 SendEmail: identity is required; a configuration set and a stored
    // template are checked too when the request uses them.
    const sesArn = (resource: string, name: string) =>
      stack.formatArn({ service: 'ses', resource, resourceName: name, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
    const sesResources = [
      sesArn('identity', this.settings.sesIdentity),
      sesArn('configuration-set', this.ledger.configurationSetName),
    ];
    for (const template of props.sesTemplateNames ?? ['*']) {
      sesResources.push(sesArn('template', template));
    }
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'SendAsConfiguredSender',
        actions: ['ses:SendEmail'],
        resources: sesResources,
        conditions: { StringEquals: { 'ses:FromAddress': this.settings.senderAddress } },
      }),
    );

    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'DeadLetterPermanentFailures',
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'BackOffRetries',
        // A retry goes back as a delayed copy (SendMessage); ChangeMessageVisibility when that fails.
        actions: ['sqs:ChangeMessageVisibility', 'sqs:SendMessage'],
        resources: [this.queue.queueArn],
      }),
    );
    // Both tables (its records, the ledger items it reads and marks) with their key, through DynamoDB.
    if (this.tableKey) fn.addToRolePolicy(tableKeyStatement('UseTableKey', this.tableKey, 'write'));
    // SendMessage to the KMS-encrypted DLQ needs a data key.
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'EncryptDeadLetters',
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [this.queueKey.keyArn],
      }),
    );

    if (props.sesTemplateNames === undefined) {
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::${sesArnPattern('template/*')}]`,
        reason:
          'Each message names its SES template, so ses:SendEmail is allowed on every template of this account and region; ' +
          'the identity is fixed and ses:FromAddress pins the sender. Set sesTemplateNames to list the templates instead.',
      });
    }
  }

  /**
   * Lets `grantee` look keys up as `npm run status -- --stack` does: GetItem on both tables, and
   * their key (through DynamoDB) when it is customer-managed.
   */
  public grantStatusLookup(grantee: iam.IGrantable): iam.Grant {
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem'],
      resourceArns: [this.table.tableArn, this.ledger.table.tableArn],
    });
    if (this.tableKey === undefined) return grant;
    const key = tableKeyStatement('UseTableKey', this.tableKey, 'read');
    return grant.combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: key.actions,
        resourceArns: key.resources,
        conditions: key.conditions,
      }),
    );
  }

  /**
   * The redrive role: what `email-pipeline dlq list|redrive|purge --stack` needs on the DLQ, the
   * work queue and their key, and nothing else. The CLI reads the stack's outputs first.
   */
  private createRedriveRole(assumedBy: iam.IPrincipal): iam.Role {
    const role = new iam.Role(this, 'RedriveRole', {
      assumedBy,
      description: "Operators' role for the email pipeline's DLQ: list, redrive and purge it",
      maxSessionDuration: Duration.hours(1),
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadStackOutputs',
        actions: ['cloudformation:DescribeStacks'],
        resources: [Stack.of(this).stackId],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ListRedrivePurgeDeadLetters',
        // list: receive and make visible again; redrive: the native move task (which receives and
        // deletes as the caller) or, with --max, receive, send to the queue, delete; purge.
        actions: [
          'sqs:GetQueueAttributes',
          'sqs:ReceiveMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:DeleteMessage',
          'sqs:StartMessageMoveTask',
          'sqs:ListMessageMoveTasks',
          'sqs:CancelMessageMoveTask',
          'sqs:PurgeQueue',
        ],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'RedriveToTheQueue',
        actions: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
        resources: [this.queue.queueArn],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadAndWriteEncryptedMessages',
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: [this.queueKey.keyArn],
      }),
    );
    return role;
  }

  /**
   * Queue policies: only the topic (and the function, re-enqueueing a retried
   * message) may send to the work queue, only the function (and the queue's own
   * redrive) to its DLQ, only the topic to the subscription's DLQ; the redrive
   * principals, named by ARN, are exempt. A Deny, so that no IAM policy
   * (PowerUser, a CI role) can plant a message the function would send, and no
   * tag a principal could set on itself opens it.
   */
  private restrictQueueSenders(redrivePrincipals: readonly iam.IPrincipal[]): void {
    const redrivers = redrivePrincipals.map((principal) => principalArn(principal, 'redrivePrincipals'));
    const deny = (queue: sqs.Queue, sid: string, allowed: Record<string, string[]>) =>
      onlyTheseSend(queue, sid, {
        ...allowed,
        'aws:PrincipalArn': [...(allowed['aws:PrincipalArn'] ?? []), ...redrivers],
      });
    // The function sends too: a retried message goes back to the work queue as a delayed copy
    // (the retry budget); it only ever re-enqueues an envelope it received from the topic.
    deny(this.queue, 'OnlyTheTopicSends', {
      'aws:SourceArn': [this.topic.topicArn],
      'aws:PrincipalArn': [this.role.roleArn],
    });
    deny(this.deadLetterQueue, 'OnlyTheFunctionDeadLetters', {
      'aws:PrincipalArn': [this.role.roleArn],
      'aws:SourceArn': [this.queue.queueArn],
    });
    deny(this.subscriptionDeadLetterQueue, 'OnlyTheTopicDeadLetters', { 'aws:SourceArn': [this.topic.topicArn] });
  }

  /**
   * Topic policy: the listed publishers may publish (and use the key to do
   * so); everyone else is denied, whatever their IAM policies say.
   */
  private restrictPublishers(principals: readonly iam.IPrincipal[]): void {
    if (principals.length === 0) {
      throw new SettingsError('publisherPrincipals', [], 'must name at least one publisher');
    }
    const accounts: string[] = [];
    const arns: string[] = [];
    for (const principal of principals) {
      if (principal instanceof iam.AccountPrincipal) accounts.push(principal.accountId);
      else if (principal instanceof iam.ArnPrincipal) arns.push(principal.arn);
      else if (isRole(principal)) arns.push(principal.roleArn);
      else {
        throw new SettingsError(
          'publisherPrincipals',
          principal.toString(),
          'each must be an account (AccountPrincipal, AccountRootPrincipal), a role or an ArnPrincipal',
        );
      }
      this.topic.grantPublish(principal);
    }
    const conditions: Record<string, Record<string, string[]>> = {};
    if (accounts.length > 0) conditions.StringNotEquals = { 'aws:PrincipalAccount': accounts };
    if (arns.length > 0) conditions.ArnNotEquals = { 'aws:PrincipalArn': arns };
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyConfiguredPublishers',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions,
      }),
    );
  }
}

function checkConstructOptions(props: EmailPipelineProps): void {
  const runtimeMajor = /^nodejs(\d+)\.x$/.exec(RUNTIME.name)?.[1];
  if (BUNDLING.target !== `node${runtimeMajor}`) {
    // A programming error, not a setting: lib/construct/bundling.ts and RUNTIME must move together.
    throw new Error(`esbuild target ${BUNDLING.target} does not match the Lambda runtime ${RUNTIME.name}`);
  }
  const serviceName = props.serviceName ?? DEFAULT_SERVICE_NAME;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(serviceName)) {
    throw new SettingsError('serviceName', serviceName, 'must be 1 to 128 letters, digits, ".", "_" or "-"');
  }
  for (const name of props.sesTemplateNames ?? []) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      throw new SettingsError('sesTemplateNames', name, 'each must be 1 to 64 letters, digits, _ or -');
    }
  }
  if (props.sesTemplateNames !== undefined && props.sesTemplateNames.length === 0) {
    throw new SettingsError('sesTemplateNames', [], 'must name at least one template, or be left out to allow all');
  }
}

/** How cdk-nag renders an SES ARN of this stack in a finding id. */
function sesArnPattern(resource: string): string {
  return `arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:${resource}`;
}

/**
 * The ARN a principal is known by in `aws:PrincipalArn`: a role's (which its sessions carry too) or
 * a user's. Accounts are refused: their ARN names only the root user, and an exemption names principals.
 */
function principalArn(principal: iam.IPrincipal, setting: string): string {
  const refuse = (value: unknown): never => {
    throw new SettingsError(setting, value, 'each must be a role or a user, by ARN (an IRole or an ArnPrincipal)');
  };
  if (principal instanceof iam.AccountPrincipal) return refuse(principal.toString());
  if (isRole(principal)) return principal.roleArn;
  if (principal instanceof iam.ArnPrincipal) {
    const arn = principal.arn;
    // A token (a role of another stack) is the app's to get right; a literal must be a role or user ARN.
    if (!Token.isUnresolved(arn) && !ROLE_OR_USER_ARN.test(arn)) return refuse(arn);
    return arn;
  }
  return refuse(principal.toString());
}

function isRole(p: iam.IPrincipal): p is iam.IRole {
  return (
    typeof (p as Partial<iam.IRole>).roleArn === 'string' && typeof (p as Partial<iam.IRole>).roleName === 'string'
  );
}
