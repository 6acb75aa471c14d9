/**
 * Creates the pipeline's resources on the local emulators from the same
 * resolved settings the CDK construct uses: topic, queue with redrive to the
 * DLQ, the SNS -> SQS subscription (raw delivery off) and the idempotency
 * table with TTL.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, SubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DLQ_RETENTION_SECONDS, type ResolvedSettings } from '../config';
import { LEDGER_TABLE } from '../../lambdas/ledger/schema';
import { IDEMPOTENCY_TABLE, type HandlerResourceRefs } from '../handler-env';

/**
 * The local send ledger table of the pipeline named `name`: the one place the
 * name is made (resources, `npm start`'s outputs, `npm run status`).
 */
export function ledgerTableName(name: string): string {
  return `${name}-ledger`;
}

export interface LocalResources {
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterQueueUrl: string;
  readonly deadLetterQueueArn: string;
  readonly tableName: string;
  /** The send ledger's table (see {@link ledgerTableName}). */
  readonly ledgerTableName: string;
}

/** What the handler needs to know of these resources (its environment). */
export function handlerRefs(resources: LocalResources): HandlerResourceRefs {
  return {
    topicArn: resources.topicArn,
    tableName: resources.tableName,
    sourceQueueUrl: resources.queueUrl,
    deadLetterQueueUrl: resources.deadLetterQueueUrl,
    ledgerTableName: resources.ledgerTableName,
  };
}

export interface ResourceClients {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`queue ${queueUrl} has no QueueArn`);
  return arn;
}

async function createTable(
  dynamodb: DynamoDBClient,
  tableName: string,
  keys: { readonly partitionKey: string; readonly ttlAttribute: string } = IDEMPOTENCY_TABLE,
): Promise<void> {
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: keys.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: keys.partitionKey, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.TableStatus !== 'ACTIVE') throw new Error(`table ${tableName} is ${Table?.TableStatus}`);
  await dynamodb
    .send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: keys.ttlAttribute, Enabled: true },
      }),
    )
    .catch((error: Error) => {
      // Enabling TTL twice is refused; anything else is a real problem.
      if (!/already enabled/i.test(error.message)) throw error;
    });
}

/** Creates (or finds) the send ledger's table, keyed and expiring as lambdas/ledger/schema.ts says. */
export function createLedgerTable(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  return createTable(dynamodb, tableName, LEDGER_TABLE);
}

/** Creates (or finds) every resource named after `name`. Safe to call twice. */
export async function createResources(
  clients: ResourceClients,
  settings: ResolvedSettings,
  name: string,
): Promise<LocalResources> {
  const { sns, sqs, dynamodb } = clients;
  const tableName = `${name}-idempotency`;
  const ledgerTable = ledgerTableName(name);
  const [topic, dlq] = await Promise.all([
    sns.send(new CreateTopicCommand({ Name: `${name}-topic` })),
    sqs.send(
      new CreateQueueCommand({
        QueueName: `${name}-dlq`,
        Attributes: { MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS) },
      }),
    ),
    createTable(dynamodb, tableName),
    createLedgerTable(dynamodb, ledgerTable),
  ]);
  const topicArn = topic.TopicArn;
  const deadLetterQueueUrl = dlq.QueueUrl;
  if (!topicArn || !deadLetterQueueUrl) throw new Error('the emulator did not return a topic ARN or DLQ URL');
  const deadLetterQueueArn = await queueArn(sqs, deadLetterQueueUrl);
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-queue`,
      Attributes: {
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(settings.retentionPeriodSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: deadLetterQueueArn,
          maxReceiveCount: settings.maxReceiveCount,
        }),
      },
    }),
  );
  const queueUrl = queue.QueueUrl;
  if (!queueUrl) throw new Error('the emulator did not return a queue URL');
  const arn = await queueArn(sqs, queueUrl);
  await sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: arn,
      Attributes: { RawMessageDelivery: 'false' },
    }),
  );
  return {
    topicArn,
    queueUrl,
    queueArn: arn,
    deadLetterQueueUrl,
    deadLetterQueueArn,
    tableName,
    ledgerTableName: ledgerTable,
  };
}
