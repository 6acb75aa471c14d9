/**
 * The handler run in this process, as test/integration/handler.dynamodb.test.ts does: the
 * real createHandler and Powertools idempotency against DynamoDB Local, SES faked at the
 * client level. Each DynamoDB client carries a middleware that counts commands by name.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { PublishBatchCommand } from '@aws-sdk/client-sns';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { ResolvedSettings } from '../../../lib/settings';
import { handlerEnvironment } from '../../../lib/construct/handler-env';
import { emulatorConfig } from '../local/emulator-config';
import { emulatorClients, type EmulatorEndpoints } from '../local/emulators';
import { queueRecord, snsEnvelope } from '../local/records';
import { makeContext } from '../local/event-source';
import { createResources, handlerRefs, type LocalResources } from '../local/resources';
import { createStoreClient } from '../../../lambdas/runtime/clients';
import { createHandler } from '../../../lambdas/send-email/handler';
import { createSendConfirmation, LedgerAwarePersistenceLayer } from '../../../lambdas/send-email/testing';
import { readSettings, type HandlerSettings, readConfirmSettings } from '../../../lambdas/kernel/environment';
import { withEnv } from './stats';

/** Per command name: calls, HTTP attempts (retries included) and errors by name. */
export interface CommandCount {
  calls: number;
  attempts: number;
  errors: Record<string, number>;
  /** Failed conditional writes whose error carried the old item (ReturnValuesOnConditionCheckFailure). */
  oldItemReturned: number;
}

/** "PutItemCommand" -> "PutItem". */
function commandOf(commandName: string | undefined): string {
  return (commandName ?? 'unknown').replace(/Command$/, '');
}

/** Counts DynamoDB commands at the SDK, across every client it is attached to. */
export class DynamoDbRequestCounter {
  private counts = new Map<string, CommandCount>();

  attach(client: DynamoDBClient): DynamoDBClient {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const entry = this.entry(commandOf(context.commandName));
        entry.calls += 1;
        try {
          return await next(args);
        } catch (error) {
          const name = error instanceof Error ? error.name : 'unknown';
          entry.errors[name] = (entry.errors[name] ?? 0) + 1;
          if (typeof error === 'object' && error !== null && 'Item' in error && error.Item) entry.oldItemReturned += 1;
          throw error;
        }
      },
      { step: 'initialize', name: 'benchCountCommands' },
    );
    // The deserialize step runs once per attempt, inside the retry middleware.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        this.entry(commandOf(context.commandName)).attempts += 1;
        return next(args);
      },
      { step: 'deserialize', name: 'benchCountAttempts' },
    );
    return client;
  }

  /** Counts since the last reset, by command name. */
  snapshot(): Record<string, CommandCount> {
    return Object.fromEntries([...this.counts].map(([name, c]) => [name, { ...c, errors: { ...c.errors } }]));
  }

  reset(): void {
    this.counts = new Map();
  }

  private entry(name: string): CommandCount {
    let entry = this.counts.get(name);
    if (!entry) {
      entry = { calls: 0, attempts: 0, errors: {}, oldItemReturned: 0 };
      this.counts.set(name, entry);
    }
    return entry;
  }
}

/** An SES stand-in that answers after a fixed delay. */
export class FakeSes {
  sent = 0;
  constructor(readonly latencyMs: number) {}
  async send(_command: SendEmailCommand): Promise<{ MessageId: string }> {
    if (this.latencyMs > 0) await sleep(this.latencyMs);
    this.sent += 1;
    return { MessageId: `bench-${this.sent}` };
  }
}

export interface InProcessStack {
  readonly endpoints: EmulatorEndpoints;
  readonly settings: ResolvedSettings;
  readonly handlerSettings: HandlerSettings;
  /** The send function's whole environment, as the construct writes it (every reader takes it). */
  readonly environment: Readonly<Record<string, string>>;
  readonly resources: LocalResources;
  readonly counter: DynamoDbRequestCounter;
}

export async function createInProcessStack(
  endpoints: EmulatorEndpoints,
  settings: ResolvedSettings,
  name: string,
): Promise<InProcessStack> {
  const clients = emulatorClients(endpoints);
  const resources = await createResources(clients, settings, name).finally(() => clients.destroy());
  const environment = handlerEnvironment(settings, handlerRefs(resources));
  const handlerSettings = readSettings(environment);
  return { endpoints, settings, handlerSettings, environment, resources, counter: new DynamoDbRequestCounter() };
}

/**
 * The handlers' SQS client: the pipeline only calls SQS to dead-letter a record or to set a
 * retry's backoff, and a clean benchmark does neither, so any call fails the record (and so
 * the measurement, see runBatches).
 */
const noQueueCalls = {
  send: (): Promise<never> => Promise.reject(new Error('bench: unexpected SQS call (a dead-letter or a retry)')),
};

export type BenchHandler = (records: readonly SQSRecord[]) => Promise<SQSBatchResponse>;

export interface HandlerOptions {
  readonly ses: FakeSes;
  readonly processInParallel: boolean;
  /** false: built with POWERTOOLS_IDEMPOTENCY_DISABLED=true, as the "off" consumers run. */
  readonly idempotency: boolean;
}

/**
 * One handler instance, with its own DynamoDB client built as the deployed handler builds it
 * (lambdas/runtime/clients.ts): what one Lambda container holds.
 */
export function newHandler(stack: InProcessStack, options: HandlerOptions): { invoke: BenchHandler; close(): void } {
  const dynamodb = stack.counter.attach(createStoreClient(emulatorConfig(stack.endpoints.dynamodb)));
  // The production persistence layer and confirm-before-resend (handler.ts), on the counted
  // client: a ledger read on the normal path would show in the counts.
  const persistenceStore = new LedgerAwarePersistenceLayer({
    tableName: stack.resources.tableName,
    awsSdkV3Client: dynamodb,
    keyPrefix: stack.handlerSettings.keyPrefix,
  });
  const logger = new Logger({ logLevel: 'SILENT' });
  const metrics = new Metrics({ namespace: 'Bench', serviceName: 'bench' });
  const confirm = createSendConfirmation({
    // The environment the construct writes, not a hand-picked part of it: a variable the function
    // comes to require cannot break the benchmark unseen.
    settings: readConfirmSettings(stack.environment, stack.handlerSettings.dedupeWindowSeconds),
    persistence: persistenceStore,
    dynamodb,
    logger,
    metrics,
  });
  // Powertools reads POWERTOOLS_IDEMPOTENCY_DISABLED when the pipeline builds its config.
  const handler = withEnv({ POWERTOOLS_IDEMPOTENCY_DISABLED: String(!options.idempotency) }, () =>
    createHandler(
      {
        settings: stack.handlerSettings,
        ses: options.ses,
        sqs: noQueueCalls,
        persistenceStore,
        logger,
        metrics,
        confirm,
        random: () => 0,
      },
      { processInParallel: options.processInParallel },
    ),
  );
  return {
    invoke: (records) => handler({ Records: [...records] }, makeContext('bench', 30_000)),
    close: () => dynamodb.destroy(),
  };
}

/** Invokes batch after batch; any failed record makes the measurement invalid. */
export async function runBatches(invoke: BenchHandler, batches: readonly (readonly SQSRecord[])[]): Promise<void> {
  for (const batch of batches) {
    const response = await invoke(batch);
    if (response.batchItemFailures.length > 0)
      throw new Error(`${response.batchItemFailures.length} record(s) failed in a batch`);
  }
}

/** A queue record carrying an SNS envelope, as the event source mapping delivers it. */
export function snsRecord(stack: InProcessStack, snsMessageId: string, message: object): SQSRecord {
  const envelope = snsEnvelope(message, { messageId: snsMessageId, topicArn: stack.resources.topicArn });
  return queueRecord(JSON.stringify(envelope), stack.resources.queueArn);
}

/** An email unique to `n`. */
export function benchEmail(n: number): { to: string; subject: string; text: string } {
  return { to: `user${n}@bench.example.com`, subject: `Order ${n} confirmed`, text: `Thank you for order ${n}.` };
}

/**
 * Publishes emails 0..count-1 ({@link benchEmail}) to the pipeline's topic as fast as SNS
 * takes them: PublishBatch of 10, four calls in flight.
 */
export async function publishBurst(
  sns: { send(command: PublishBatchCommand): Promise<{ Failed?: unknown[] }> },
  topicArn: string,
  count: number,
): Promise<void> {
  const batches = chunk(
    Array.from({ length: count }, (_, i) => i),
    10,
  );
  for (const group of chunk(batches, 4)) {
    await Promise.all(
      group.map(async (batch) => {
        const result = await sns.send(
          new PublishBatchCommand({
            TopicArn: topicArn,
            PublishBatchRequestEntries: batch.map((i) => ({ Id: String(i), Message: JSON.stringify(benchEmail(i)) })),
          }),
        );
        if (result.Failed?.length) throw new Error(`${result.Failed.length} publish(es) failed`);
      }),
    );
  }
}

/** Resolves with `promise`, or rejects with `message()` after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message())), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Splits into batches of `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
