/**
 * The send function's composition root: what one Lambda container holds, built once. The
 * settings (kernel/environment.ts), Powertools' logger and metrics, the SDK clients
 * (runtime/clients.ts, send/email.ts) and the stages of the flow (flow.ts) over them, each
 * given exactly the dependencies its factory declares; the Lambda entry point (main.ts) builds
 * it at init. The in-process harnesses (tests, benchmarks) build the same thing with clients of
 * their own through createHandler; the parts they wire by hand come from testing.ts.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { ENV, readConfirmSettings, readSettings, type HandlerSettings } from '../kernel/environment';
import { LANE_METRIC, METRIC, type Lane } from '../kernel/names';
import type { TeamRoutes } from '../kernel/teams';
import { builtOnFirstSend, createDynamoDbClient, createSqsClient, createStoreClient } from '../runtime/clients';
import { LedgerAwarePersistenceLayer } from './claim/persistence';
import { createSendConfirmation, type SendConfirmation } from './confirm';
import { createDeadLetterNotice, readNoticeSettings } from './outcome/dead-letter-notice';
import { RecordFlow } from './flow';
import { createOutcome } from './outcome/outcome';
import type { QueueClient } from './outcome/queue-record';
import { createAttachmentObjects, s3ObjectStore, type AttachmentObjects } from './send/attachments';
import { budgetFromEnvironment } from './send/byte-budget';
import { CircuitBreaker } from './send/breaker';
import { createSesClient } from './send/email';
import { sourceOf, type RecordSource } from './send/lanes';
import type { Pacer } from './send/pacer';
import { dynamoDbSlotStore, type SlotStore } from './send/slot-store';
import { createSender, type SendClient } from './send/sender';
import type { LaneId } from './send/lane-rates';
import { SharedPacer } from './send/shared-pacer';
import { SendPacer } from './send/token-bucket';
import { createSchedule, ledgerRecordScheduled, type RecordScheduled } from './schedule';

/** How long one S3 request of an attachment may stay silent. */
const S3_REQUEST_TIMEOUT_MS = 10_000;

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
  /** The attachments bucket (send/attachments.ts). @default none: a message with an s3Key is refused */
  readonly attachments?: AttachmentObjects;
  /** Records a key's first deferral in the send ledger (schedule.ts). @default none: no status `scheduled` */
  readonly recordScheduled?: RecordScheduled;
  /** For jitter; injectable so tests are repeatable. */
  readonly random?: () => number;
  readonly now?: () => number;
  /** Waits between completion-write attempts; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The shared rate lease's store (send/slot-store.ts): all containers together pace to maxSendRate.
   * @default none: each container paces to its static share, maxSendRate / maxConcurrency
   */
  readonly rateStore?: SlotStore;
}

export type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The Lambda handler over the flow: records in parallel, a partial batch response for the
 * ones to retry, metrics flushed after each invocation. One handler serves one invocation at
 * a time, as a Lambda container does; what it builds here lives as long as the container.
 */
export function createHandler(deps: HandlerDeps, options: { readonly processInParallel?: boolean } = {}): Handler {
  const { settings, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = deps.random ?? Math.random;
  const pacers = createPacers({ settings, logger, metrics, rateStore: deps.rateStore, now, sleep });
  const breaker = CircuitBreaker.forSettings(settings, now);
  // One flow per queue: the same stages, but a queue's sends take its lane's slots and its retries
  // go back to it (the work queue, the high-priority queue, each team's queue). Built on first use.
  const flows = new Map<string, RecordFlow>();
  const flowOf = (source: RecordSource): RecordFlow => {
    const built = flows.get(source.id);
    if (built !== undefined) return built;
    const laneSettings: HandlerSettings = { ...settings, sourceQueueUrl: source.queueUrl };
    const flow = new RecordFlow({
      settings: laneSettings,
      claim: { settings: laneSettings, persistenceStore: deps.persistenceStore, now, sleep },
      schedule: createSchedule({
        settings: laneSettings,
        sqs: deps.sqs,
        logger,
        metrics,
        now,
        recordScheduled: deps.recordScheduled,
      }),
      confirm: deps.confirm,
      sender: createSender({
        settings: laneSettings,
        ses: deps.ses,
        pacer: pacers.lane(source.id),
        breaker,
        metrics,
        now,
        attachments: deps.attachments,
      }),
      outcome: createOutcome({
        settings: laneSettings,
        sqs: deps.sqs,
        logger,
        metrics,
        confirm: deps.confirm,
        now,
        random,
      }),
      now,
    });
    flows.set(source.id, flow);
    return flow;
  };
  const processor = new BatchProcessor(EventType.SQS);
  const processInParallel = options.processInParallel ?? true;
  return async (event, context) => {
    logger.addContext(context);
    const flow = flowOf(sourceOf(event.Records[0]?.eventSourceARN, settings));
    flow.registerContext(context);
    try {
      return await processPartialResponse(event, (record: SQSRecord) => flow.process(record), processor, {
        context,
        processInParallel,
      });
    } finally {
      for (const [name, recipients] of Object.entries(pacers.takePaced())) {
        if (recipients > 0)
          metrics
            .singleMetric()
            .addDimension('lane', name)
            .addMetric(LANE_METRIC.recipientsPaced, MetricUnit.Count, recipients);
      }
      metrics.publishStoredMetrics();
    }
  };
}

/** What the container's pacers are built from. */
interface PacerDeps {
  readonly settings: Pick<HandlerSettings, 'maxSendRate' | 'maxConcurrency' | 'highPriorityRateShare' | 'teams'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly rateStore: SlotStore | undefined;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The container's pacers: each lane's, and the recipients paced per lane since the last invocation. */
interface Pacers {
  lane(lane: LaneId): Pacer;
  takePaced(): Partial<Record<Lane, number>>;
}

/**
 * The shared rate lease's pacer (send/shared-pacer.ts) over the static share (send/pacing.ts),
 * which it falls back to; without a lease store, the static share alone.
 */
function createPacers(deps: PacerDeps): Pacers {
  const { settings, logger, metrics, now, sleep } = deps;
  const staticPacer = SendPacer.forSettings(settings, { now, sleep });
  if (!deps.rateStore) return { lane: () => staticPacer, takePaced: () => ({}) };
  const shared = new SharedPacer({
    store: deps.rateStore,
    maxSendRate: settings.maxSendRate,
    highShare: settings.highPriorityRateShare,
    teamShares: teamShares(settings.teams),
    highTeams: Object.keys(teamShares(settings.teams)).filter((team) => settings.teams?.[team]?.highPriorityTopicArn),
    fallback: staticPacer,
    now,
    sleep,
    onWrites: (writes) => metrics.addMetric(METRIC.rateLeaseWrites, MetricUnit.Count, writes),
    onFallback: (error) => {
      metrics.addMetric(METRIC.rateLeaseFallbacks, MetricUnit.Count, 1);
      logger.warn('rate lease unavailable: pacing to the static share', { error: String(error) });
    },
    onImplausible: (lane, found, repaired) => {
      metrics.addMetric(METRIC.rateLeaseRepairs, MetricUnit.Count, 1);
      logger.warn(
        repaired
          ? 'rate lease item implausible: replaced'
          : 'rate lease item implausible: not replaced yet, pacing to the static share',
        { lane, found },
      );
    },
  });
  return { lane: (lane) => shared.lane(lane), takePaced: () => shared.takePaced() };
}

/** Each team's share of the rate, for the teams with a lane of their own (a queue and a share). */
function teamShares(teams: TeamRoutes | undefined): Record<string, number> {
  const shares: Record<string, number> = {};
  for (const [team, route] of Object.entries(teams ?? {})) {
    if (route.queueUrl !== undefined && route.rateSharePercent !== undefined) shares[team] = route.rateSharePercent;
  }
  return shares;
}

/** Clients to use instead of the ones runtime/clients.ts builds. @default none: all from runtime/clients.ts */
export type ContainerClients = Partial<Pick<HandlerDeps, 'ses' | 'sqs'>>;

/** The handler as a Lambda container runs it: settings from the environment, the production clients. */
export function createContainerHandler(clients: ContainerClients = {}, env: NodeJS.ProcessEnv = process.env): Handler {
  const settings = readSettings(env);
  const logger = new Logger();
  const metrics = new Metrics();
  const confirmSettings = readConfirmSettings(env, settings.dedupeWindowSeconds);
  // Three DynamoDB clients, each for what it serves. The idempotency records' (the claim's two
  // requests per record, runtime/clients.ts):
  const idempotencyClient = createStoreClient();
  // The ledger's (confirm before resend, the dead-letter and scheduled marks), only on those paths:
  const ledgerClient = builtOnFirstSend(() => createDynamoDbClient());
  // The shared rate lease's, one attempt per request: a failed lease falls back to the static share.
  const rateLeaseClient = builtOnFirstSend(() => createDynamoDbClient({ maxAttempts: 1 }));
  const persistenceStore = new LedgerAwarePersistenceLayer({
    tableName: settings.tableName,
    awsSdkV3Client: idempotencyClient,
    keyPrefix: settings.keyPrefix,
  });
  const bucket = env[ENV.attachmentsBucketName];
  const sqs = clients.sqs ?? builtOnFirstSend(createSqsClient);
  const noticeSettings = readNoticeSettings(env);
  // A team's key's ledger marks (scheduled, dead-lettered) and callbacks name its team.
  const teamNames = settings.teams ? Object.keys(settings.teams) : undefined;
  return createHandler({
    settings,
    rateStore: dynamoDbSlotStore({
      client: rateLeaseClient,
      tableName: settings.tableName,
      keyPrefix: settings.keyPrefix,
    }),
    ses: clients.ses ?? createSesClient(settings.sesTimeoutMs),
    // S3 reads are two signed requests (s3-store.ts), built on the first object.
    // Files held at once are bounded by the function's memory (send/byte-budget.ts).
    attachments: createAttachmentObjects(
      bucket ? s3ObjectStore(bucket, S3_REQUEST_TIMEOUT_MS) : undefined,
      budgetFromEnvironment(env),
    ),
    sqs,
    persistenceStore,
    logger,
    metrics,
    recordScheduled:
      confirmSettings.ledgerTableName !== undefined
        ? ledgerRecordScheduled(
            ledgerClient,
            confirmSettings.ledgerTableName,
            confirmSettings.retentionSeconds,
            teamNames,
          )
        : undefined,
    confirm: createSendConfirmation({
      settings: confirmSettings,
      persistence: persistenceStore,
      dynamodb: ledgerClient,
      logger,
      metrics,
      ...(teamNames ? { teamNames } : {}),
      ...(noticeSettings
        ? {
            notice: createDeadLetterNotice({
              settings: noticeSettings,
              sqs,
              ...(teamNames ? { teamNames } : {}),
              logger,
            }),
          }
        : {}),
    }),
  });
}
