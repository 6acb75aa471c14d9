/**
 * The Lambda entry point: glue only. Clients are built once per container with
 * explicit timeouts; everything else lives in pipeline.ts and its pure modules.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SafeSesRetryStrategy } from './email';
import { createPipeline } from './pipeline';
import { readSettings } from './settings';

const settings = readSettings();
const logger = new Logger();
const metrics = new Metrics();

const handlerWith = (requestTimeout: number) =>
  new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout, throwOnRequestTimeout: true });

const dynamodb = new DynamoDBClient({ requestHandler: handlerWith(3000), maxAttempts: 3 });
// No blind retries: SES has no idempotency token (see SafeSesRetryStrategy).
const ses = new SESv2Client({ requestHandler: handlerWith(settings.sesTimeoutMs), retryStrategy: new SafeSesRetryStrategy() });
// The queue URLs are in this region; never let a URL's host redirect the client.
const sqs = new SQSClient({ requestHandler: handlerWith(5000), maxAttempts: 3, useQueueUrlAsEndpoint: false });

const persistenceStore = new DynamoDBPersistenceLayer({ tableName: settings.tableName, awsSdkV3Client: dynamodb });
const pipeline = createPipeline({ settings, ses, sqs, persistenceStore, logger, metrics });
const processor = new BatchProcessor(EventType.SQS);

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  logger.addContext(context);
  pipeline.registerContext(context);
  try {
    return await processPartialResponse(event, pipeline.processRecord, processor, { context });
  } finally {
    metrics.publishStoredMetrics();
  }
};
