/**
 * For item 4: the libraries the send-email handler cannot do without (the SES, DynamoDB and SQS
 * clients; Powertools idempotency on DynamoDB, batch, logger and metrics), built and wired as the
 * handler does, with none of the pipeline's own code. Bundled with the deployed options, it
 * shows how much of the handler's size and require() time those libraries are by themselves.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

const ses = new SESv2Client({});
const sqs = new SQSClient({});
const logger = new Logger();
const metrics = new Metrics();
const persistenceStore = new DynamoDBPersistenceLayer({
  tableName: process.env.IDEMPOTENCY_TABLE_NAME ?? 'table',
  awsSdkV3Client: new DynamoDBClient({}),
});
const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', payloadValidationJmesPath: 'email' });
const sendOnce = makeIdempotent(
  (request: { key: string; email: string }) =>
    ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'noreply@example.com',
        Destination: { ToAddresses: [request.email] },
        Content: { Simple: { Subject: { Data: request.key }, Body: { Text: { Data: request.key } } } },
      }),
    ),
  { persistenceStore, config },
);
const processor = new BatchProcessor(EventType.SQS);

async function processRecord(record: SQSRecord): Promise<void> {
  try {
    await sendOnce({ key: record.messageId, email: record.body });
    metrics.addMetric('Sent', MetricUnit.Count, 1);
  } catch (error) {
    logger.error('failed', { error });
    await sqs.send(new SendMessageCommand({ QueueUrl: process.env.DEAD_LETTER_QUEUE_URL, MessageBody: record.body }));
  }
}

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, processRecord, processor, { context });
