/**
 * The Lambda entry point: glue only. Clients are built once per container with
 * explicit timeouts (clients.ts); everything else lives in pipeline.ts and its
 * pure modules.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createDynamoDbClient, createSesClient, createSqsClient } from './clients';
import { createSendConfirmation, LedgerAwarePersistenceLayer, readConfirmSettings } from './confirm';
import { createHandler } from './pipeline';
import { readSettings } from './settings';

const settings = readSettings();
const logger = new Logger();
const metrics = new Metrics();
// The idempotency store's client; the ledger reads and dead-letter marks use their own.
const persistenceStore = new LedgerAwarePersistenceLayer({
  tableName: settings.tableName,
  awsSdkV3Client: createDynamoDbClient(),
});

export const handler = createHandler({
  settings,
  ses: createSesClient(settings.sesTimeoutMs),
  sqs: createSqsClient(),
  persistenceStore,
  logger,
  metrics,
  confirm: createSendConfirmation({
    settings: readConfirmSettings(process.env, settings.dedupeWindowSeconds),
    persistence: persistenceStore,
    dynamodb: createDynamoDbClient(),
    logger,
    metrics,
  }),
});
