/**
 * The callbacks' local resources, as the construct makes them (lib/construct/callbacks/): the
 * callbacks table (key + id, the by-day index), the callbacks queue with its DLQ, and the queue's
 * one subscription to the delivery-status topic, raw, filtered on the teams with a callback.
 * Each callback's signing secret is made here too (`whsec_` + 32 random bytes, base64), where the
 * construct keeps one in Secrets Manager. Safe to call twice: an existing table or queue is taken
 * as it is.
 */
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, ResourceInUseException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  CALLBACKS_QUEUE,
  CALLBACKS_TABLE,
  callbackFilterPolicy,
  type CallbackTargets,
} from '../../../lambdas/kernel/callbacks/names';
import { DLQ_RETENTION_SECONDS, type ResolvedSettings } from '../../../lib/settings';
import { configuredCallbacks } from '../../../lib/settings/callbacks';
import { activeWithTtl } from './tables';

/** The callbacks the settings ask for (shared with the construct: lib/settings/callbacks.ts). */
export { configuredCallbacks };

/** What {@link createCallbackResources} made. */
export interface CallbackResources {
  readonly tableName: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
  readonly deadLetterQueueArn: string;
  /** Each callback's URL, statuses and signing secret (`whsec_…`), by team (`*`: the pipeline's). */
  readonly targets: CallbackTargets;
}

/** A new Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  if (!Attributes?.QueueArn) throw new Error(`queue ${queueUrl} has no QueueArn`);
  return Attributes.QueueArn;
}

async function createCallbacksTable(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  const { partitionKey, sortKey, ttlAttribute, dayIndex } = CALLBACKS_TABLE;
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [partitionKey, sortKey, dayIndex.partitionKey, dayIndex.sortKey].map((name) => ({
          AttributeName: name,
          AttributeType: 'S' as const,
        })),
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: dayIndex.indexName,
            KeySchema: [
              { AttributeName: dayIndex.partitionKey, KeyType: 'HASH' },
              { AttributeName: dayIndex.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await activeWithTtl(dynamodb, tableName, ttlAttribute);
}

/**
 * Creates the callbacks' resources named after `name` for the callbacks `settings` configure,
 * subscribed to `deliveryStatusTopicArn`; undefined when none is configured (nothing is made).
 * `secrets`: signing secrets to keep (by target), e.g. those of an earlier start.
 */
export async function createCallbackResources(
  clients: { readonly sns: SNSClient; readonly sqs: SQSClient; readonly dynamodb: DynamoDBClient },
  settings: Pick<ResolvedSettings, 'callbackUrl' | 'callbackStatuses' | 'teams'>,
  name: string,
  deliveryStatusTopicArn: string,
  secrets: Readonly<Record<string, string>> = {},
): Promise<CallbackResources | undefined> {
  const callbacks = configuredCallbacks(settings);
  if (Object.keys(callbacks).length === 0) return undefined;
  const { sns, sqs, dynamodb } = clients;
  const tableName = `${name}-callbacks`;
  const [dlq] = await Promise.all([
    sqs.send(
      new CreateQueueCommand({
        QueueName: `${name}-callbacks-dlq`,
        Attributes: { MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS) },
      }),
    ),
    createCallbacksTable(dynamodb, tableName),
  ]);
  if (!dlq.QueueUrl) throw new Error('the emulator did not return the callbacks DLQ URL');
  const deadLetterQueueArn = await arnOf(sqs, dlq.QueueUrl);
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-callbacks`,
      Attributes: {
        VisibilityTimeout: String(CALLBACKS_QUEUE.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(CALLBACKS_QUEUE.retentionSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: deadLetterQueueArn,
          maxReceiveCount: CALLBACKS_QUEUE.maxReceiveCount,
        }),
      },
    }),
  );
  if (!queue.QueueUrl) throw new Error('the emulator did not return the callbacks queue URL');
  const queueArn = await arnOf(sqs, queue.QueueUrl);
  await sns.send(
    new SubscribeCommand({
      TopicArn: deliveryStatusTopicArn,
      Protocol: 'sqs',
      Endpoint: queueArn,
      Attributes: {
        RawMessageDelivery: 'true',
        FilterPolicy: JSON.stringify(callbackFilterPolicy(Object.keys(callbacks))),
      },
    }),
  );
  const targets = Object.fromEntries(
    Object.entries(callbacks).map(([target, callback]) => [
      target,
      { ...callback, secret: secrets[target] ?? newSigningSecret() },
    ]),
  );
  return {
    tableName,
    queueUrl: queue.QueueUrl,
    queueArn,
    deadLetterQueueUrl: dlq.QueueUrl,
    deadLetterQueueArn,
    targets,
  };
}
