/**
 * Creates the pipeline's resources on the local emulators from the same
 * resolved settings the CDK construct uses: topic, queue with redrive to the
 * DLQ, the schedule queue (the same DLQ), the SNS -> SQS subscription (raw delivery off) and the idempotency
 * table with TTL; the ledger table with its index by outcome.
 */
import { CreateTableCommand, ResourceInUseException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  AlreadyExistsException,
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  type SESv2Client,
} from '@aws-sdk/client-sesv2';
import { CreateBucketCommand, PutBucketLifecycleConfigurationCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateTopicCommand, SubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { LEDGER_STATUS_INDEX, LEDGER_TABLE } from '../../../lambdas/kernel/ledger/schema';
import { DLQ_RETENTION_SECONDS, type ResolvedSettings } from '../../../lib/settings';
import { LOCAL_ACCOUNT_ID } from '../../../lib/cli/target';
import { ledgerEventPattern } from '../../../lambdas/kernel/ledger/event-pattern';
import { LOCAL_DEFAULT_BUS_ARN } from './event-bus';
import { createCallbackResources, type CallbackResources } from './callback-resources';
import { activeWithTtl } from './tables';
import { createTeamTenants, createTeamTopics } from './team-topics';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import { attachmentExpiryDays } from '../../../lib/construct/pipeline/attachments-bucket';
import { SCHEDULE_FUNCTION } from '../../../lib/construct/pipeline/schedule-function';
import {
  IDEMPOTENCY_TABLE,
  type HandlerResourceRefs,
  type LedgerResourceRefs,
} from '../../../lib/construct/handler-env';

/**
 * The local send ledger table of the pipeline named `name`: the one place the
 * name is made (resources, `npm start`'s outputs, `npm run status`).
 */
export function ledgerTableName(name: string): string {
  return `${name}-ledger`;
}

/**
 * The local send function's role name: its consumers sign their requests with it as the access key
 * id, which the local SES layer reports as `ses:caller-identity`, as SES reports a role's name.
 */
export function senderRoleName(name: string): string {
  // DynamoDB Local takes letters and digits only in an access key id.
  return `${name.replace(/[^A-Za-z0-9]/g, '')}SendRole`;
}

export interface LocalResources {
  /** The send function's role name (see {@link senderRoleName}). */
  readonly senderRoleName: string;
  readonly topicArn: string;
  /** The high-priority topic: the only source of the high-priority queue, as deployed. */
  readonly highPriorityTopicArn: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  /** The high-priority queue: the high-priority topic's messages (no filter, no other source). */
  readonly highPriorityQueueUrl: string;
  readonly highPriorityQueueArn: string;
  /** The schedule queue: mail not yet due waits there (the schedule consumer's source). */
  readonly scheduleQueueUrl: string;
  readonly scheduleQueueArn: string;
  readonly deadLetterQueueUrl: string;
  readonly deadLetterQueueArn: string;
  readonly tableName: string;
  /** The send ledger's resources (see {@link createLedgerResources}). */
  readonly ledger: LedgerResources;
  /** Contract v1.2: the attachments bucket (on fauxqs's S3), when an S3 client was given. */
  readonly attachmentsBucketName?: string;
  /** The teams' topics and senders (team-topics.ts); none without teams. */
  readonly teams?: TeamRoutes;
  /** The callbacks' table, queues and targets (callback-resources.ts); none without a callback URL. */
  readonly callbacks?: CallbackResources;
}

/**
 * The send ledger, locally as deployed: a configuration set whose SNS event destination (the
 * `ses-events` topic) feeds a buffer queue (SNS envelope, its own DLQ) that the ledger consumer
 * reads; the ledger table; the delivery-status topic.
 */
export interface LedgerResources {
  readonly configurationSetName: string;
  readonly bufferQueueUrl: string;
  readonly bufferQueueArn: string;
  readonly bufferDeadLetterQueueUrl: string;
  readonly bufferDeadLetterQueueArn: string;
  readonly tableName: string;
  readonly deliveryStatusTopicArn: string;
}

/** The SES event types the local event destination publishes (all the ledger records). */
export const LEDGER_EVENT_TYPES = [
  'SEND',
  'DELIVERY',
  'BOUNCE',
  'COMPLAINT',
  'REJECT',
  'DELIVERY_DELAY',
  'RENDERING_FAILURE',
] as const;

/** Receives on the buffer queue before an event goes to its DLQ. */
export const LEDGER_BUFFER_MAX_RECEIVES = 5;
/** The local ledger consumer's invocation timeout and the buffer queue's visibility timeout. */
export const LEDGER_FUNCTION_TIMEOUT_SECONDS = 10;

/** The ledger function's resources, and what it trusts of them (lambdas/kernel/ledger/binding.ts), as lib/construct/ledger/ gives them in a stack. */
export function ledgerRefs(resources: LocalResources): LedgerResourceRefs {
  return {
    tableName: resources.ledger.tableName,
    deliveryStatusTopicArn: resources.ledger.deliveryStatusTopicArn,
    origin: {
      accountId: LOCAL_ACCOUNT_ID,
      configurationSetName: resources.ledger.configurationSetName,
      senderRoleName: resources.senderRoleName,
    },
    idempotencyTableName: resources.tableName,
  };
}

/** What the handler needs to know of these resources (its environment). */
export function handlerRefs(resources: LocalResources): HandlerResourceRefs {
  return {
    topicArn: resources.topicArn,
    highPriorityTopicArn: resources.highPriorityTopicArn,
    tableName: resources.tableName,
    sourceQueueUrl: resources.queueUrl,
    scheduleQueueUrl: resources.scheduleQueueUrl,
    deadLetterQueueUrl: resources.deadLetterQueueUrl,
    highPriorityQueueUrl: resources.highPriorityQueueUrl,
    ledgerTableName: resources.ledger.tableName,
    ...(resources.attachmentsBucketName ? { attachmentsBucketName: resources.attachmentsBucketName } : {}),
    ...(resources.teams ? { teams: resources.teams } : {}),
    ...(resources.callbacks
      ? {
          callbacks: {
            queueUrl: resources.callbacks.queueUrl,
            targetNames: Object.keys(resources.callbacks.targets),
          },
        }
      : {}),
  };
}

export interface ResourceClients {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  /** For the configuration set; required by {@link createResources}. */
  readonly ses?: SESv2Client;
  /** For the attachments bucket. @default none: no bucket */
  readonly s3?: S3Client;
}

/**
 * The attachments bucket, as the construct makes it where an emulator can: objects expire after
 * the dedupe window (fauxqs stores the rule but does not enforce it). Encryption, TLS and the
 * bucket policy are the deployed bucket's only: fauxqs keeps no policies.
 */
async function createAttachmentsBucket(s3: S3Client, settings: ResolvedSettings, name: string): Promise<string> {
  const bucket = `${name}-attachments`
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 63);
  await s3.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: unknown) => {
    // fauxqs creates idempotently; S3 says it is ours already.
    if ((error as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw error;
  });
  await s3.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: {
        Rules: [
          {
            ID: 'ExpireAfterDedupeWindow',
            Status: 'Enabled',
            Filter: { Prefix: '' },
            Expiration: { Days: attachmentExpiryDays(settings.dedupeWindowSeconds) },
          },
        ],
      },
    }),
  );
  return bucket;
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${queueUrl} has no QueueArn`);
  return arn;
}

/** A table's index as the construct makes it (keys only). */
interface IndexShape {
  readonly indexName: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

async function createTable(
  dynamodb: DynamoDBClient,
  tableName: string,
  shape: { readonly partitionKey: string; readonly ttlAttribute: string } = IDEMPOTENCY_TABLE,
  index?: IndexShape,
): Promise<void> {
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: shape.partitionKey, AttributeType: 'S' },
          ...(index
            ? [
                { AttributeName: index.partitionKey, AttributeType: 'S' as const },
                { AttributeName: index.sortKey, AttributeType: 'S' as const },
              ]
            : []),
        ],
        KeySchema: [{ AttributeName: shape.partitionKey, KeyType: 'HASH' }],
        ...(index
          ? {
              GlobalSecondaryIndexes: [
                {
                  IndexName: index.indexName,
                  KeySchema: [
                    { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
                    { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
                  ],
                  Projection: { ProjectionType: 'KEYS_ONLY' as const },
                },
              ],
            }
          : {}),
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await activeWithTtl(dynamodb, tableName, shape.ttlAttribute);
}

/** Subscribes a queue to a topic (SNS envelope, raw delivery off, no filter); returns the queue's ARN. */
async function subscribeQueue(clients: ResourceClients, topicArn: string, queueUrl: string): Promise<string> {
  const arn = await queueArn(clients.sqs, queueUrl);
  await clients.sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: arn,
      Attributes: { RawMessageDelivery: 'false' },
    }),
  );
  return arn;
}

/** Ignores "already exists" (creating twice is fine). */
function existing(error: unknown): void {
  if (!(error instanceof AlreadyExistsException)) throw error;
}

/** The local SES layer's endpoint, from its client. */
async function endpointOf(client: SESv2Client): Promise<string> {
  const endpoint = await client.config.endpoint?.();
  if (!endpoint) throw new Error('the SES client has no endpoint: the local event bus lives in the local SES layer');
  const port = endpoint.port ? `:${endpoint.port}` : '';
  return `${endpoint.protocol}//${endpoint.hostname}${port}`;
}

/** Adds a rule with an SQS target to the local default bus (tools/dev/local/event-bus.ts, in the SES layer). */
export async function putLocalRule(
  ses: SESv2Client,
  rule: { readonly Name: string; readonly EventPattern: unknown; readonly QueueUrl: string },
): Promise<void> {
  const response = await fetch(`${await endpointOf(ses)}/local/eventbridge/rules`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  if (!response.ok) throw new Error(`the local event bus refused rule ${rule.Name}: ${await response.text()}`);
}

/** Creates (or finds) the send ledger's resources named after `name`. Safe to call twice. */
export async function createLedgerResources(
  clients: ResourceClients,
  settings: ResolvedSettings,
  name: string,
): Promise<LedgerResources> {
  const { sns, sqs, dynamodb, ses } = clients;
  if (!ses) throw new Error('createLedgerResources: an SES client is needed for the configuration set');
  const configurationSetName = settings.configurationSetName ?? name;
  const tableName = ledgerTableName(name);
  const [statusTopic, bufferDlq] = await Promise.all([
    sns.send(new CreateTopicCommand({ Name: `${name}-delivery-status` })),
    sqs.send(
      new CreateQueueCommand({
        QueueName: `${name}-ses-events-dlq`,
        // The local ledger consumer reads it during `dlq redrive --queue ledger`: the buffer's visibility.
        Attributes: {
          MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS),
          VisibilityTimeout: String(LEDGER_FUNCTION_TIMEOUT_SECONDS * 3),
        },
      }),
    ),
    createTable(dynamodb, tableName, LEDGER_TABLE, LEDGER_STATUS_INDEX),
  ]);
  const deliveryStatusTopicArn = statusTopic.TopicArn;
  const bufferDeadLetterQueueUrl = bufferDlq.QueueUrl;
  if (!deliveryStatusTopicArn || !bufferDeadLetterQueueUrl) {
    throw new Error('the emulator did not return a topic ARN or queue URL for the ledger');
  }
  const bufferDeadLetterQueueArn = await queueArn(sqs, bufferDeadLetterQueueUrl);
  const buffer = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-ses-events`,
      Attributes: {
        VisibilityTimeout: String(LEDGER_FUNCTION_TIMEOUT_SECONDS * 3),
        MessageRetentionPeriod: String(settings.retentionPeriodSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: bufferDeadLetterQueueArn,
          maxReceiveCount: LEDGER_BUFFER_MAX_RECEIVES,
        }),
      },
    }),
  );
  const bufferQueueUrl = buffer.QueueUrl;
  if (!bufferQueueUrl) throw new Error('the emulator did not return the ledger buffer queue URL');
  const bufferQueueArn = await queueArn(sqs, bufferQueueUrl);
  // As the construct's rule: SES's own events of this configuration set, to the buffer queue.
  await putLocalRule(ses, {
    Name: `${name}-ses-events`,
    EventPattern: ledgerEventPattern(LOCAL_ACCOUNT_ID, configurationSetName),
    QueueUrl: bufferQueueUrl,
  });
  await ses.send(new CreateConfigurationSetCommand({ ConfigurationSetName: configurationSetName })).catch(existing);
  await ses
    .send(
      new CreateConfigurationSetEventDestinationCommand({
        ConfigurationSetName: configurationSetName,
        EventDestinationName: 'ledger',
        EventDestination: {
          Enabled: true,
          MatchingEventTypes: [...LEDGER_EVENT_TYPES],
          EventBridgeDestination: { EventBusArn: LOCAL_DEFAULT_BUS_ARN },
        },
      }),
    )
    .catch(existing);
  return {
    configurationSetName,
    bufferQueueUrl,
    bufferQueueArn,
    bufferDeadLetterQueueUrl,
    bufferDeadLetterQueueArn,
    tableName,
    deliveryStatusTopicArn,
  };
}

/** Creates (or finds) every resource named after `name`. Safe to call twice. */
export async function createResources(
  clients: ResourceClients,
  settings: ResolvedSettings,
  name: string,
): Promise<LocalResources> {
  const { sns, sqs, dynamodb } = clients;
  const tableName = `${name}-idempotency`;
  const ledger = createLedgerResources(clients, settings, name);
  ledger.catch(() => undefined); // awaited below; a failure of the rest must not leave it unhandled
  const [topic, highPriorityTopic, dlq] = await Promise.all([
    sns.send(new CreateTopicCommand({ Name: `${name}-topic` })),
    sns.send(new CreateTopicCommand({ Name: `${name}-high-priority` })),
    sqs.send(
      new CreateQueueCommand({
        QueueName: `${name}-dlq`,
        Attributes: { MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS) },
      }),
    ),
    createTable(dynamodb, tableName),
  ]);
  const topicArn = topic.TopicArn;
  const highPriorityTopicArn = highPriorityTopic.TopicArn;
  const deadLetterQueueUrl = dlq.QueueUrl;
  if (!topicArn || !highPriorityTopicArn || !deadLetterQueueUrl) {
    throw new Error('the emulator did not return a topic ARN or DLQ URL');
  }
  const deadLetterQueueArn = await queueArn(sqs, deadLetterQueueUrl);
  // Both lanes' queues alike, as the construct makes them, and the schedule queue; one DLQ.
  const workQueue = async (
    queueName: string,
    visibilitySeconds = settings.visibilityTimeoutSeconds,
  ): Promise<string> => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: queueName,
        Attributes: {
          VisibilityTimeout: String(visibilitySeconds),
          MessageRetentionPeriod: String(settings.retentionPeriodSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: deadLetterQueueArn,
            maxReceiveCount: settings.maxReceiveCount,
          }),
        },
      }),
    );
    if (!QueueUrl) throw new Error('the emulator did not return a queue URL');
    return QueueUrl;
  };
  const [queueUrl, highPriorityQueueUrl, scheduleQueueUrl] = await Promise.all([
    workQueue(`${name}-queue`),
    workQueue(`${name}-high`),
    workQueue(`${name}-schedule`, SCHEDULE_FUNCTION.timeoutSeconds * 6),
  ]);
  const arn = await subscribeQueue(clients, topicArn, queueUrl);
  const attachmentsBucketName = clients.s3 ? await createAttachmentsBucket(clients.s3, settings, name) : undefined;
  // Each queue has one topic, as deployed: the high-priority queue only the high-priority topic's.
  const highPriorityQueueArn = await subscribeQueue(clients, highPriorityTopicArn, highPriorityQueueUrl);
  const topics = settings.teams
    ? await createTeamTopics(sns, settings.teams, name, {
        teamQueue: async (queueName) => {
          const url = await workQueue(queueName);
          return { url, arn: await queueArn(sqs, url) };
        },
        highPriorityQueueArn,
      })
    : undefined;
  const ledgerResources = await ledger;
  const callbacks = await createCallbackResources(clients, settings, name, ledgerResources.deliveryStatusTopicArn);
  const teams =
    topics && settings.teams && clients.ses
      ? await createTeamTenants(clients.ses, settings.teams, topics, name, ledgerResources.configurationSetName)
      : topics;
  return {
    senderRoleName: senderRoleName(name),
    topicArn,
    highPriorityTopicArn,
    queueUrl,
    queueArn: arn,
    highPriorityQueueUrl,
    highPriorityQueueArn,
    scheduleQueueUrl,
    scheduleQueueArn: await queueArn(sqs, scheduleQueueUrl),
    deadLetterQueueUrl,
    deadLetterQueueArn,
    tableName,
    ledger: ledgerResources,
    ...(attachmentsBucketName ? { attachmentsBucketName } : {}),
    ...(teams ? { teams } : {}),
    ...(callbacks ? { callbacks } : {}),
  };
}
