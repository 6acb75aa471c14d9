/**
 * The local pipeline: resources on the emulators plus consumer processes that
 * run the handler bundle (and the ledger's and the schedule function's). `npm start`, the demo and the end-to-end tests all
 * use this one harness.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CALLBACK_FUNCTION } from '../../../lambdas/kernel/callbacks/names';
import { DECISIONS, type Decision, type Lane } from '../../../lambdas/kernel/names';
import { lastPart } from '../../../lambdas/kernel/teams';
import { ENV, LEDGER_ENV } from '../../../lambdas/kernel/environment';
import type { ResolvedSettings } from '../../../lib/settings';
import {
  LEDGER_FUNCTION_MEMORY_MB,
  SCHEDULE_FUNCTION,
  callbackEnvironment,
  handlerEnvironment,
  ledgerEnvironment,
  scheduleEnvironment,
  semiSpaceMb,
} from '../../../lib/construct/handler-env';
import { buildBundles, type Bundles } from './build';
import { emulatorClients, type EmulatorClients, type EmulatorEndpoints } from './emulators';
import { LOCAL_AWS_ENV } from './emulator-config';
import type { BatchReport } from './event-source';
import { OUT_OF_MEMORY_EVENT } from './memory-watch';
import { launch, waitFor, type ManagedProcess } from './processes';
import {
  createResources,
  handlerRefs,
  LEDGER_FUNCTION_TIMEOUT_SECONDS,
  ledgerRefs,
  type LocalResources,
} from './resources';

/** A handler log line that records a decision (see lambdas/send-email/outcome/report.ts). */
export interface DecisionEvent {
  readonly consumer: string;
  readonly decision: Decision;
  readonly dedupeKey?: string;
  readonly snsMessageId?: string;
  readonly sqsMessageId?: string;
  readonly receiveCount?: number;
  readonly errorClass?: string;
  readonly errorCode?: string;
  readonly reason?: string;
  readonly sesMessageId?: string;
  readonly failOpen?: boolean;
  readonly to?: readonly string[];
  readonly [field: string]: unknown;
}

/** Any JSON line a consumer prints (handler logs, metrics, the consumer's own events). */
export interface ConsumerLine {
  readonly consumer: string;
  readonly json?: Record<string, unknown>;
  readonly text: string;
}

export interface LocalPipelineOptions {
  /** Resource name prefix, e.g. `email-pipeline`; tests use a unique one each. */
  readonly name: string;
  readonly settings: ResolvedSettings;
  readonly endpoints: EmulatorEndpoints;
  /** Prebuilt bundles (build once, share between pipelines). @default built now */
  readonly bundles?: Bundles;
  /** Called for every decision any consumer logs. */
  readonly onDecision?: (event: DecisionEvent) => void;
  /** Called for every line any consumer prints. */
  readonly onLine?: (line: ConsumerLine) => void;
  /** Keep every consumer line in {@link LocalPipeline.lines} (tests). @default false */
  readonly keepLines?: boolean;
  /**
   * How long a send whose fate is unknown waits for its SES event before it is sent again
   * (SEND_CONFIRMATION_GRACE_SECONDS). @default the settings' sendConfirmationGraceSeconds (300)
   */
  readonly sendConfirmationGraceSeconds?: number;
  /**
   * The flag file `email-pipeline pause` writes locally: the send consumers receive nothing while
   * it exists (the ledger consumer goes on). @default none: never paused
   */
  readonly pauseFile?: string;
  /**
   * The flag file `email-pipeline dlq redrive --queue ledger` writes locally: while it exists the
   * ledger consumer also reads the ledger DLQ, as the ledger function's DLQ mapping does on AWS
   * while enabled. @default none: the ledger DLQ is never read
   */
  readonly ledgerRedriveFile?: string;
}

export interface ConsumerOptions {
  /** Shown in logs. @default `pod-<n>` */
  readonly name?: string;
  /** Extra environment for this consumer: fault-proxy endpoints, FAIL_OPEN, chaos switches. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The queue it polls: `high` is the high-priority queue's own event source mapping (no batching
   * window), as on AWS. @default normal (the work queue)
   */
  readonly lane?: Lane;
  /** The team whose own queue it polls (a team's event source mapping): normal lane. @default none */
  readonly team?: string;
}

export interface Consumer {
  readonly name: string;
  readonly process: ManagedProcess;
  /** Graceful stop: finishes the batch in hand. */
  stop(): Promise<void>;
  /** Like a crash: SIGKILL, no clean-up. */
  kill(): Promise<void>;
}

const DECISION_NAMES: ReadonlySet<string> = new Set(DECISIONS);

/** What a consumer process keeps of this process's environment. */
function inheritedEnvironment(): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'NODE_OPTIONS']) {
    const value = process.env[key];
    if (value !== undefined) inherited[key] = value;
  }
  return inherited;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export class LocalPipeline {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  /** S3 on fauxqs: the attachments bucket (resources.attachmentsBucketName). */
  readonly s3: EmulatorClients['s3'];
  /** SES v2 through the local SES layer (configuration sets; the local event bus's rules). */
  readonly ses: NonNullable<EmulatorClients['ses']>;
  /** Every decision seen so far, in order. */
  readonly decisions: DecisionEvent[] = [];
  /** Every line consumers printed, when `keepLines` is on. */
  readonly lines: ConsumerLine[] = [];
  /** Every batch a consumer reported (see BatchReport in event-source.ts), in order. */
  readonly batches: (BatchReport & { readonly consumer: string })[] = [];
  /** Consumers killed for going above the function's memory (memory-watch.ts), in order. */
  readonly outOfMemory: { readonly consumer: string; readonly rssMb: number; readonly limitMb: number }[] = [];
  /** The highest RSS each consumer with a memory limit reported with a batch, in MB. */
  readonly peakRssMb = new Map<string, number>();
  private readonly consumers = new Set<Consumer>();
  private consumerCount = 0;

  private constructor(
    readonly options: LocalPipelineOptions,
    readonly resources: LocalResources,
    readonly bundles: Bundles,
    private readonly clients: EmulatorClients,
  ) {
    this.sns = clients.sns;
    this.sqs = clients.sqs;
    this.dynamodb = clients.dynamodb;
    this.s3 = clients.s3;
    if (!clients.ses)
      throw new Error('a local pipeline needs the SES endpoint (its ledger rule lives in the SES layer)');
    this.ses = clients.ses;
  }

  /** Creates the resources (idempotent) and builds the bundles if not given. Starts no consumer. */
  static async create(options: LocalPipelineOptions): Promise<LocalPipeline> {
    const clients = emulatorClients(options.endpoints);
    const [resources, bundles] = await Promise.all([
      createResources(clients, options.settings, options.name),
      options.bundles ?? buildBundles(),
    ]);
    return new LocalPipeline(options, resources, bundles, clients);
  }

  /** The environment a consumer (and so the handler) runs with. */
  consumerEnvironment(
    name: string,
    extra: Readonly<Record<string, string>> = {},
    lane: Lane = 'normal',
    team?: string,
  ): Record<string, string> {
    const { settings, endpoints } = this.options;
    const high = lane === 'high';
    const polled = this.polledQueue(lane, team);
    const inherited = inheritedEnvironment();
    return {
      ...inherited,
      ...LOCAL_AWS_ENV,
      ...handlerEnvironment(settings, handlerRefs(this.resources)),
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_SESV2: endpoints.ses,
      // fauxqs serves S3 on its SNS/SQS port; an IP endpoint makes the SDK use path-style URLs.
      AWS_ENDPOINT_URL_S3: endpoints.sqs,
      // Signs as the send function's role: the local SES reports it as the events' caller identity.
      AWS_ACCESS_KEY_ID: this.resources.senderRoleName,
      // Every send goes through the ledger's configuration set; an unknown-fate send reads the ledger.
      [ENV.configurationSetName]: this.resources.ledger.configurationSetName,
      [LEDGER_ENV.tableName]: this.resources.ledger.tableName,
      [LEDGER_ENV.sendConfirmationGraceSeconds]: String(
        this.options.sendConfirmationGraceSeconds ?? settings.sendConfirmationGraceSeconds,
      ),
      HANDLER_BUNDLE: this.bundles.handler,
      // The queue it polls (the handler's SOURCE_QUEUE_URL stays the work queue, its normal lane's retries).
      POLL_QUEUE_URL: polled.url,
      SOURCE_QUEUE_ARN: polled.arn,
      BATCH_SIZE: String(high ? Math.min(settings.batchSize, 10) : settings.batchSize),
      BATCHING_WINDOW_SECONDS: String(high ? 0 : settings.maxBatchingWindowSeconds),
      FUNCTION_TIMEOUT_SECONDS: String(settings.functionTimeoutSeconds),
      // The send function's memory: the handler's byte budget follows it, and above it the consumer
      // is killed as Lambda kills a container (memory-watch.ts).
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(settings.memorySizeMb),
      CONSUMER_NAME: name,
      ...(this.options.pauseFile ? { SEND_PAUSE_FILE: this.options.pauseFile } : {}),
      ...extra,
    };
  }

  /** The queue a send consumer polls: the high-priority queue, a team's queue, or the work queue. */
  private polledQueue(lane: Lane, team: string | undefined): { readonly url: string; readonly arn: string } {
    const { resources } = this;
    if (lane === 'high') return { url: resources.highPriorityQueueUrl, arn: resources.highPriorityQueueArn };
    if (team === undefined) return { url: resources.queueUrl, arn: resources.queueArn };
    const url = resources.teams?.[team]?.queueUrl;
    if (url === undefined) throw new Error(`team ${team} has no queue here`);
    // The emulator's ARNs differ from the work queue's in the queue name only.
    return { url, arn: resources.queueArn.replace(/[^:]+$/, lastPart(url)) };
  }

  /** The environment of the ledger consumer (the ledger function on the SES events buffer queue). */
  ledgerEnvironment(name: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    const { settings, endpoints } = this.options;
    const { ledger } = this.resources;
    const inherited = inheritedEnvironment();
    return {
      ...inherited,
      ...LOCAL_AWS_ENV,
      ...ledgerEnvironment(settings, ledgerRefs(this.resources)),
      POWERTOOLS_SERVICE_NAME: 'email-pipeline-ledger',
      POWERTOOLS_LOG_LEVEL: settings.logLevel,
      POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_SNS: endpoints.sns,
      HANDLER_BUNDLE: this.bundles.ledger,
      SOURCE_QUEUE_URL: ledger.bufferQueueUrl,
      SOURCE_QUEUE_ARN: ledger.bufferQueueArn,
      ...(this.options.ledgerRedriveFile
        ? {
            REDRIVE_QUEUE_URL: ledger.bufferDeadLetterQueueUrl,
            REDRIVE_QUEUE_ARN: ledger.bufferDeadLetterQueueArn,
            REDRIVE_FLAG_FILE: this.options.ledgerRedriveFile,
          }
        : {}),
      BATCH_SIZE: '10',
      BATCHING_WINDOW_SECONDS: '0',
      FUNCTION_TIMEOUT_SECONDS: String(LEDGER_FUNCTION_TIMEOUT_SECONDS),
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(LEDGER_FUNCTION_MEMORY_MB),
      CONSUMER_NAME: name,
      ...extra,
    };
  }

  /**
   * The environment of the schedule consumer: the schedule function on the schedule queue, with its
   * memory as its limit, as its own mapping runs it on AWS.
   */
  scheduleEnvironment(name: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    const { settings, endpoints } = this.options;
    const bundle = this.bundles.functions.schedule;
    if (!bundle) throw new Error('the schedule function was not built');
    return {
      ...inheritedEnvironment(),
      ...LOCAL_AWS_ENV,
      ...scheduleEnvironment(settings, {
        scheduleQueueUrl: this.resources.scheduleQueueUrl,
        workQueueUrl: this.resources.queueUrl,
        highPriorityQueueUrl: this.resources.highPriorityQueueUrl,
        ...(this.resources.teams ? { teams: this.resources.teams } : {}),
      }),
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      HANDLER_BUNDLE: bundle,
      // SOURCE_QUEUE_URL is the function's work queue (where due copies go); it polls the schedule queue.
      POLL_QUEUE_URL: this.resources.scheduleQueueUrl,
      SOURCE_QUEUE_ARN: this.resources.scheduleQueueArn,
      BATCH_SIZE: String(SCHEDULE_FUNCTION.batchSize),
      BATCHING_WINDOW_SECONDS: '0',
      FUNCTION_TIMEOUT_SECONDS: String(SCHEDULE_FUNCTION.timeoutSeconds),
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(SCHEDULE_FUNCTION.memorySizeMb),
      CONSUMER_NAME: name,
      ...extra,
    };
  }

  /** Starts the schedule consumer: copies not yet due hop in the schedule queue, due ones go to their lane's queue. */
  startScheduleConsumer(options: ConsumerOptions = {}): Promise<Consumer> {
    const name = options.name ?? 'schedule';
    return this.launchConsumer(name, this.scheduleEnvironment(name, options.env));
  }

  /**
   * The environment of the callback consumer: the callback function on the callbacks queue, its
   * targets' secrets given as they are (Secrets Manager's part on AWS), http and 127.0.0.1 allowed.
   */
  callbackEnvironment(name: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    const { settings, endpoints } = this.options;
    const { callbacks } = this.resources;
    const bundle = this.bundles.functions.callbacks;
    if (!callbacks) throw new Error("no callback is configured (callbackUrl, or a team's callbackUrl)");
    if (!bundle) throw new Error('the callback function was not built');
    return {
      ...inheritedEnvironment(),
      ...LOCAL_AWS_ENV,
      ...callbackEnvironment(settings, { ...callbacks, allowPrivateAddresses: true }),
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      HANDLER_BUNDLE: bundle,
      SOURCE_QUEUE_URL: callbacks.queueUrl,
      SOURCE_QUEUE_ARN: callbacks.queueArn,
      BATCH_SIZE: String(CALLBACK_FUNCTION.batchSize),
      BATCHING_WINDOW_SECONDS: '0',
      FUNCTION_TIMEOUT_SECONDS: String(CALLBACK_FUNCTION.timeoutSeconds),
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(CALLBACK_FUNCTION.memorySizeMb),
      CONSUMER_NAME: name,
      ...extra,
    };
  }

  /** Starts the callback consumer: status changes POSTed to their team's callback URL. */
  startCallbackConsumer(options: ConsumerOptions = {}): Promise<Consumer> {
    const name = options.name ?? 'callbacks';
    return this.launchConsumer(name, this.callbackEnvironment(name, options.env));
  }

  /** Starts the ledger consumer: SES events from the buffer queue into the ledger table. */
  startLedgerConsumer(options: ConsumerOptions = {}): Promise<Consumer> {
    const name = options.name ?? 'ledger';
    return this.launchConsumer(name, this.ledgerEnvironment(name, options.env));
  }

  /** Starts one consumer process ("pod") and resolves when it polls. */
  startConsumer(options: ConsumerOptions = {}): Promise<Consumer> {
    this.consumerCount += 1;
    const kind = options.lane === 'high' ? 'high' : options.team !== undefined ? `team-${options.team}` : 'pod';
    const name = options.name ?? `${kind}-${this.consumerCount}`;
    return this.launchConsumer(name, this.consumerEnvironment(name, options.env, options.lane, options.team));
  }

  private async launchConsumer(name: string, env: Record<string, string>): Promise<Consumer> {
    let ready = false;
    // The heap cannot grow past the function's memory either (Buffers live outside it: the RSS watch
    // counts those), and its young generation is the function's (NODE_OPTIONS in the construct).
    const memoryMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
    const heapLimit =
      memoryMb > 0 ? [`--max-old-space-size=${memoryMb}`, `--max-semi-space-size=${semiSpaceMb(memoryMb)}`] : [];
    const proc = await launch({
      name,
      command: process.execPath,
      args: ['--enable-source-maps', ...heapLimit, this.bundles.consumer],
      guarded: false,
      env,
      onOutput: (text) => {
        const json = parseJson(text);
        if (json?.consumer === name && json.event === 'ready') ready = true;
        if (json?.consumer === name && json.event === 'batch') {
          this.batches.push({ ...(json as unknown as BatchReport), consumer: name });
          if (typeof json.peakRssMb === 'number') {
            this.peakRssMb.set(name, Math.max(json.peakRssMb, this.peakRssMb.get(name) ?? 0));
          }
        }
        if (json?.consumer === name && json.event === OUT_OF_MEMORY_EVENT) {
          this.outOfMemory.push({ consumer: name, rssMb: Number(json.rssMb), limitMb: Number(json.limitMb) });
        }
        const line = { consumer: name, text, ...(json ? { json } : {}) };
        if (this.options.keepLines) this.lines.push(line);
        this.options.onLine?.(line);
        if (json && typeof json.decision === 'string' && DECISION_NAMES.has(json.decision)) {
          const event = { ...json, consumer: name } as DecisionEvent;
          this.decisions.push(event);
          this.options.onDecision?.(event);
        }
      },
    });
    await waitFor(async () => ready, { timeoutMs: 15_000, what: `consumer ${name} to start`, process: proc });
    const consumer: Consumer = {
      name,
      process: proc,
      stop: async () => {
        this.consumers.delete(consumer);
        await proc.stop({ graceMs: (this.options.settings.functionTimeoutSeconds + 2) * 1000 });
      },
      kill: async () => {
        this.consumers.delete(consumer);
        process.kill(proc.pid, 'SIGKILL');
        await proc.exited;
      },
    };
    this.consumers.add(consumer);
    return consumer;
  }

  /** Messages visible, in flight and delayed in a queue. */
  async queueDepth(
    which: 'queue' | 'high' | 'schedule' | 'dlq' = 'queue',
  ): Promise<{ visible: number; inFlight: number; delayed: number }> {
    const QueueUrl = {
      queue: this.resources.queueUrl,
      high: this.resources.highPriorityQueueUrl,
      schedule: this.resources.scheduleQueueUrl,
      dlq: this.resources.deadLetterQueueUrl,
    }[which];
    const { Attributes = {} } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    return {
      visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  }

  /** True when both lanes' queues and the schedule queue hold nothing at all (visible, in flight or delayed). */
  async isDrained(): Promise<boolean> {
    const depths = await Promise.all([this.queueDepth('queue'), this.queueDepth('high'), this.queueDepth('schedule')]);
    return depths.every((depth) => depth.visible + depth.inFlight + depth.delayed === 0);
  }

  /** Stops every consumer still running. */
  async stop(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
    this.clients.destroy();
  }
}
