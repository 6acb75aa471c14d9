/**
 * The send function's composition root: what one Lambda container holds, built once. The
 * settings (kernel/environment.ts), Powertools' logger and metrics, the SDK clients
 * (runtime/clients.ts, send/email.ts) and the stages of the flow (flow.ts) over them; the
 * Lambda entry point (main.ts) builds it at init. The in-process harnesses (tests, benchmarks)
 * build the same thing with clients of their own, and import this module only: what they need
 * is exported here.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { readConfirmSettings, readSettings, type HandlerSettings } from '../kernel/environment';
import { builtOnFirstSend, createDynamoDbClient, createSqsClient, createStoreClient } from '../runtime/clients';
import { LedgerAwarePersistenceLayer } from './claim/persistence';
import { createSendConfirmation, type SendConfirmation } from './confirm';
import { RecordFlow } from './flow';
import { createOutcome } from './outcome/outcome';
import type { QueueClient } from './outcome/queue-record';
import { CircuitBreaker } from './send/breaker';
import { createSesClient } from './send/email';
import { SendPacer } from './send/pacing';
import { createSender, type SendClient } from './send/sender';
import { createSchedule, ledgerRecordScheduled, type RecordScheduled } from './schedule';

// What the in-process harnesses build a handler with (tests and benchmarks).
export { LedgerAwarePersistenceLayer, newAttemptId } from './claim/persistence';
export { createSendConfirmation } from './confirm';
export { buildSendEmailInput } from './send/email';
export { COMPLETION_RETRY_MARGIN_MS } from './claim/claim';

/** What a handler is built from: its settings and clients. */
export interface HandlerDeps {
  readonly settings: HandlerSettings;
  readonly ses: SendClient;
  readonly sqs: QueueClient;
  readonly persistenceStore: BasePersistenceLayer;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Confirm before resend (confirm.ts): consults the send ledger when an earlier attempt's fate is unknown. @default off */
  readonly confirm?: SendConfirmation;
  /** Records a key's first deferral in the send ledger (schedule.ts). @default none: no status `scheduled` */
  readonly recordScheduled?: RecordScheduled;
  /** For jitter; injectable so tests are repeatable. */
  readonly random?: () => number;
  readonly now?: () => number;
  /** Waits between completion-write attempts; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The Lambda handler over the flow: records in parallel, a partial batch response for the
 * ones to retry, metrics flushed after each invocation. One handler serves one invocation at
 * a time, as a Lambda container does; what it builds here lives as long as the container.
 */
export function createHandler(deps: HandlerDeps, options: { readonly processInParallel?: boolean } = {}): Handler {
  const { settings, logger, metrics } = deps;
  const clock = {
    now: deps.now ?? Date.now,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: deps.random ?? Math.random,
  };
  const stages = { ...deps, ...clock };
  const sender = createSender({
    ...stages,
    pacer: SendPacer.forSettings(settings, clock),
    breaker: CircuitBreaker.forSettings(settings, clock.now),
  });
  const outcome = createOutcome(stages);
  const schedule = createSchedule(stages);
  const flow = new RecordFlow({ ...stages, sender, outcome, schedule });
  const processor = new BatchProcessor(EventType.SQS);
  const processInParallel = options.processInParallel ?? true;
  return async (event, context) => {
    logger.addContext(context);
    flow.registerContext(context);
    try {
      return await processPartialResponse(event, (record: SQSRecord) => flow.process(record), processor, {
        context,
        processInParallel,
      });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}

/** Clients to use instead of the ones runtime/clients.ts builds. @default none: all from runtime/clients.ts */
export type ContainerClients = Partial<Pick<HandlerDeps, 'ses' | 'sqs'>>;

/** The handler as a Lambda container runs it: settings from the environment, the production clients. */
export function createContainerHandler(clients: ContainerClients = {}, env: NodeJS.ProcessEnv = process.env): Handler {
  const settings = readSettings(env);
  const logger = new Logger();
  const metrics = new Metrics();
  // The idempotency store's client; the ledger reads and dead-letter marks use their own.
  const confirmSettings = readConfirmSettings(env, settings.dedupeWindowSeconds);
  const ledgerClient = builtOnFirstSend(() => createDynamoDbClient());
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
    ...(confirmSettings.ledgerTableName !== undefined
      ? {
          recordScheduled: ledgerRecordScheduled(
            ledgerClient,
            confirmSettings.ledgerTableName,
            confirmSettings.retentionSeconds,
          ),
        }
      : {}),
    confirm: createSendConfirmation({
      settings: confirmSettings,
      persistence: persistenceStore,
      dynamodb: ledgerClient,
      logger,
      metrics,
    }),
  });
}
