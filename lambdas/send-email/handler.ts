/**
 * The Lambda entry point: glue only. Clients are built once per container with
 * explicit timeouts (clients.ts); everything else lives in pipeline.ts and its
 * pure modules.
 */
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createDynamoDbClient, createSesClient, createSqsClient } from './clients';
import { createHandler } from './pipeline';
import { readSettings } from './settings';

const settings = readSettings();

export const handler = createHandler({
  settings,
  ses: createSesClient(settings.sesTimeoutMs),
  sqs: createSqsClient(),
  persistenceStore: new DynamoDBPersistenceLayer({
    tableName: settings.tableName,
    awsSdkV3Client: createDynamoDbClient(),
  }),
  logger: new Logger(),
  metrics: new Metrics(),
});
