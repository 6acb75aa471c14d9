/**
 * The Lambda entry point: glue only. Clients are built once per container with
 * explicit timeouts; everything else lives in pipeline.ts and its pure modules.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SafeSesRetryStrategy } from './email';
import { createHandler } from './pipeline';
import { readSettings } from './settings';

const settings = readSettings();

const httpHandler = (requestTimeout: number) =>
  new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout, throwOnRequestTimeout: true });

const dynamodb = new DynamoDBClient({ requestHandler: httpHandler(3000), maxAttempts: 3 });
// No blind retries: SES has no idempotency token (see SafeSesRetryStrategy).
const ses = new SESv2Client({
  requestHandler: httpHandler(settings.sesTimeoutMs),
  retryStrategy: new SafeSesRetryStrategy(),
});
// The queue URLs are in this region; never let a URL's host redirect the client.
const sqs = new SQSClient({ requestHandler: httpHandler(5000), maxAttempts: 3, useQueueUrlAsEndpoint: false });

export const handler = createHandler({
  settings,
  ses,
  sqs,
  persistenceStore: new DynamoDBPersistenceLayer({ tableName: settings.tableName, awsSdkV3Client: dynamodb }),
  logger: new Logger(),
  metrics: new Metrics(),
});
