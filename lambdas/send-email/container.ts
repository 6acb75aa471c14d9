/**
 * What one Lambda container holds: the settings, Powertools' logger and metrics, the SDK
 * clients (clients.ts) and the pipeline over them. handler.ts builds it once per container;
 * the client-CPU benchmark builds the same thing with SES and SQS stand-ins.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { builtOnFirstSend, createDynamoDbClient, createSqsClient, createStoreClient } from '../runtime/clients';
import { createSesClient } from './send/email';
import { createSendConfirmation, LedgerAwarePersistenceLayer } from './claim/persistence';
import { createHandler, type PipelineDeps } from './flow';
import { readConfirmSettings, readSettings } from '../kernel/environment';

/** Clients to use instead of the ones clients.ts builds. @default none: all from clients.ts */
export type ContainerClients = Partial<Pick<PipelineDeps, 'ses' | 'sqs'>>;

export function createContainerHandler(
  clients: ContainerClients = {},
  env: NodeJS.ProcessEnv = process.env,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const settings = readSettings(env);
  const logger = new Logger();
  const metrics = new Metrics();
  // The idempotency store's client; the ledger reads and dead-letter marks use their own.
  const persistenceStore = new LedgerAwarePersistenceLayer({
    tableName: settings.tableName,
    awsSdkV3Client: createStoreClient(),
    keyPrefix: settings.keyPrefix,
  });
  return createHandler({
    settings,
    ses: clients.ses ?? createSesClient(settings.sesTimeoutMs),
    sqs: clients.sqs ?? builtOnFirstSend(createSqsClient),
    persistenceStore,
    logger,
    metrics,
    confirm: createSendConfirmation({
      settings: readConfirmSettings(env, settings.dedupeWindowSeconds),
      persistence: persistenceStore,
      dynamodb: builtOnFirstSend(() => createDynamoDbClient()),
      logger,
      metrics,
    }),
  });
}
