/**
 * Item 5b: what the send ledger itself costs per email. The real ledger handler
 * (createLedgerHandler: lambdas/ledger/ledger.ts over lambdas/runtime/ledger-store.ts, built as
 * lambdas/ledger/handler.ts builds it) runs in this process against DynamoDB Local and the local
 * delivery-status topic, on SES events in the local SES's format (sesEventsFor: what SES
 * publishes for an email to an ordinary address, Send then Delivery), each in an SNS envelope in
 * a buffer-queue record, in batches of the construct's ledger event source
 * (LEDGER_FUNCTIONS.batchSize).
 *
 * Counted at the SDK: DynamoDB commands and HTTP attempts (DynamoDbRequestCounter), the
 * capacity units DynamoDB reports (ReturnConsumedCapacity added to every request), and the
 * publishes to the delivery-status topic. Timed: the handler's wall-clock per batch.
 *
 * Phases, each with new keys and a new handler instance:
 * - in order: the Send events of a round's emails in batches, then their Delivery events (SES
 *   publishes the Delivery after the recipient's server accepted the email, seconds later);
 *   one untimed warm-up round, then `rounds` timed ones. The cost model uses this phase.
 * - same batch: each email's Send and Delivery next to each other in one batch (the batch's
 *   records run in parallel, so the Delivery can be written first): counts only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import type { SQSRecord } from 'aws-lambda';
import { CLAIM_ATTRIBUTES, claimRef } from '../../../lambdas/kernel/ledger/binding';
import { createLedgerHandler } from '../../../lambdas/ledger/ledger';
import { readLedgerSettings } from '../../../lambdas/kernel/environment';
import { ledgerKey } from '../../../lambdas/kernel/ledger/schema';
import { idempotencyRecordId } from '../../../lambdas/status/lookup';
import { ledgerEnvironment } from '../../../lib/construct/handler-env';
import { ledgerRefs } from '../local/resources';
import { readLedgerItem } from '../../../lambdas/runtime/ledger-store';
import { createDynamoDbClient } from '../../../lambdas/runtime/clients';
import { buildSendEmailInput, newAttemptId } from '../../../lambdas/send-email/testing';
import { validateEmail } from '../../../lambdas/kernel/contract';
import { emulatorConfig } from '../local/emulator-config';
import { makeContext } from '../local/event-source';
import { eventBridgeEnvelope } from '../local/event-bus';
import { queueRecord } from '../local/records';
import { sesEventsFor } from '../local/ses-front';
import type { LedgerCostInputs } from './cost';
import { largestItemBytes, phaseCounts, type PhaseCounts } from './dynamodb-requests';
import { benchEmail, chunk, DynamoDbRequestCounter, type InProcessStack } from './in-process';
import { median, round } from './stats';

/** Capacity units DynamoDB reported, summed over the requests that answered. */
class CapacityCounter {
  requestsAsked = 0;
  requestsReported = 0;
  writeUnits = 0;
  readUnits = 0;

  reset(): void {
    this.requestsAsked = 0;
    this.requestsReported = 0;
    this.writeUnits = 0;
    this.readUnits = 0;
  }

  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = (context.commandName ?? '').replace(/Command$/, '');
        const input = args.input as { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity = 'TOTAL';
        this.requestsAsked += 1;
        const result = await next(args);
        // One object for an item operation; a list, one per table, for a batch operation.
        const reported = (
          result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }
        ).ConsumedCapacity;
        const consumed = [reported ?? []].flat().filter((c) => c.CapacityUnits !== undefined);
        if (consumed.length > 0) {
          this.requestsReported += 1;
          const units = consumed.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
          if (command === 'GetItem' || command === 'BatchGetItem') this.readUnits += units;
          else this.writeUnits += units;
        }
        return result;
      },
      { step: 'initialize', name: 'benchConsumedCapacity' },
    );
  }
}

/** Publishes by topic ARN, counted at the SDK. */
class PublishCounter {
  readonly byTopic = new Map<string, number>();

  attach(client: SNSClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PublishCommand') {
          const topic = (args.input as { TopicArn?: string }).TopicArn ?? '';
          this.byTopic.set(topic, (this.byTopic.get(topic) ?? 0) + 1);
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchCountPublishes' },
    );
  }
}

export interface LedgerPhase {
  readonly emails: number;
  /** DynamoDB commands, attempts and errors per email (all of its events), as item 2 counts them. */
  readonly dynamodb: Omit<PhaseCounts, 'emailsSent'>;
  /** Capacity units DynamoDB reported per email; null when it reported none. */
  readonly writeUnitsPerEmail: number | null;
  readonly readUnitsPerEmail: number | null;
  /** Requests that asked for ConsumedCapacity, and those whose answer carried it. */
  readonly capacityReported: { readonly asked: number; readonly reported: number };
  /** Publishes to the delivery-status topic per email. */
  readonly statusPublishesPerEmail: number;
  /** Publishes to any other topic (none expected). */
  readonly otherPublishes: number;
}

export interface LedgerBenchResult {
  /** The construct's ledger event source and function (LEDGER_FUNCTIONS in lib/construct/ledger/). */
  readonly batchSize: number;
  readonly memoryMb: number;
  /** The events SES publishes for one email to an ordinary address, in order. */
  readonly lifecycle: readonly string[];
  /** SES events per email: one SNS publish each to the events topic, one buffer-queue message each. */
  readonly eventsPerEmail: number;
  /** ReceiveMessage + DeleteMessageBatch per batch, per event. */
  readonly sqsRequestsPerEvent: number;
  readonly emailsPerRound: number;
  /** Timed rounds of the in-order phase (after one warm-up round). */
  readonly rounds: number;
  readonly inOrder: LedgerPhase & {
    /** Median wall-clock of one handler invocation with a full batch, ms; by event type too. */
    readonly batchMs: number;
    readonly batchMsByType: Readonly<Record<string, number>>;
    /** Median CPU time of this process per batch (DynamoDB Local and fauxqs not included), ms. */
    readonly cpuMsPerBatch: number;
    readonly samples: readonly number[];
  };
  readonly sameBatch: LedgerPhase;
  /** Largest ledger item after the run, by DynamoDB's item-size rules (1 write unit per 1 KB). */
  readonly largestItemBytes: number;
}

interface LedgerHandler {
  invoke(records: readonly SQSRecord[]): Promise<void>;
  close(): void;
}

/** One ledger handler instance (one container) with counted clients, built as lambdas/ledger/handler.ts does. */
function newLedgerHandler(stack: InProcessStack, counters: Counters): LedgerHandler {
  const dynamodb = counters.dynamodb.attach(createDynamoDbClient(emulatorConfig(stack.endpoints.dynamodb)));
  counters.capacity.attach(dynamodb);
  const sns = new SNSClient({ ...emulatorConfig(stack.endpoints.sns), maxAttempts: 3 });
  counters.publishes.attach(sns);
  // The environment lib/construct/ledger/ gives the function.
  const settings = readLedgerSettings(ledgerEnvironment(stack.settings, ledgerRefs(stack.resources)));
  const handler = createLedgerHandler({
    settings,
    dynamodb,
    sns,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Bench', serviceName: 'bench-ledger' }),
  });
  return {
    invoke: async (records) => {
      const response = await handler({ Records: [...records] }, makeContext('bench-ledger', 30_000));
      if (response.batchItemFailures.length > 0) {
        throw new Error(`ledger: ${response.batchItemFailures.length} record(s) failed in a batch`);
      }
    },
    close: () => {
      dynamodb.destroy();
      sns.destroy();
    },
  };
}

/** An SES MessageId of SES's length and shape. */
function sesMessageId(): string {
  return `0100019${randomBytes(7).toString('hex').slice(0, 13)}-${randomUUID()}-000000`;
}

interface Email {
  readonly key: string;
  /** Buffer-queue records of its SES events, in the order SES publishes them. */
  readonly records: readonly SQSRecord[];
  readonly types: readonly string[];
}

/**
 * The SES events of `n` emails to ordinary addresses, each keyed by a new SNS MessageId (the default key),
 * and the completed claim the send function leaves for each (written uncounted: the send function's
 * writes are item 2's), so the ledger binds the events as it does in a deployment.
 */
async function emails(stack: InProcessStack, first: number, n: number): Promise<Email[]> {
  const { ledger } = stack.resources;
  const prefix = stack.handlerSettings.keyPrefix;
  const sender = { ...stack.handlerSettings, configurationSetName: ledger.configurationSetName };
  const made = Array.from({ length: n }, (_, i) => {
    const key = randomUUID();
    const recordId = idempotencyRecordId(prefix, key);
    const attempt = { attemptId: newAttemptId(), claimRef: claimRef(prefix, recordId) };
    const messageId = sesMessageId();
    const send = buildSendEmailInput(validateEmail(benchEmail(first + i)), sender, key, attempt);
    const events = sesEventsFor(
      send,
      messageId,
      ledger.configurationSetName,
      Date.now(),
      stack.resources.senderRoleName,
    );
    const claim = {
      id: recordId,
      status: 'COMPLETED',
      expiration: Math.floor(Date.now() / 1000) + 3600,
      [CLAIM_ATTRIBUTES.attempts]: new Set([attempt.attemptId]),
      [CLAIM_ATTRIBUTES.ledgerKey]: ledgerKey(key),
      data: { sesMessageId: messageId, sentAt: new Date().toISOString(), attemptId: attempt.attemptId },
    };
    return {
      claim,
      key,
      types: events.map((e) => String(e.eventType)),
      records: events.map((event) => queueRecord(JSON.stringify(eventBridgeEnvelope(event)), ledger.bufferQueueArn)),
    };
  });
  const client = new DynamoDBClient(emulatorConfig(stack.endpoints.dynamodb));
  try {
    for (const group of chunk(made, 25)) {
      await client.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [stack.resources.tableName]: group.map(({ claim }) => ({ PutRequest: { Item: marshall(claim) } })),
          },
        }),
      );
    }
  } finally {
    client.destroy();
  }
  return made.map(({ claim, ...email }) => {
    void claim;
    return email;
  });
}

/** Every key's ledger item must say `delivered` (read with a client of its own, not counted). */
async function expectDelivered(stack: InProcessStack, keys: readonly string[]): Promise<void> {
  const client = new DynamoDBClient(emulatorConfig(stack.endpoints.dynamodb));
  try {
    for (const key of keys) {
      const item = await readLedgerItem(client, stack.resources.ledger.tableName, key);
      if (item?.status !== 'delivered') throw new Error(`ledger: key ${key} is ${item?.status ?? 'missing'}`);
    }
  } finally {
    client.destroy();
  }
}

function ledgerPhase(stack: InProcessStack, emailCount: number, counters: Counters): LedgerPhase {
  const { capacity, publishes } = counters;
  const status = stack.resources.ledger.deliveryStatusTopicArn;
  const reported = capacity.requestsReported > 0;
  const all = [...publishes.byTopic.values()].reduce((sum, n) => sum + n, 0);
  return {
    emails: emailCount,
    dynamodb: phaseCounts(emailCount, counters.dynamodb.snapshot()),
    writeUnitsPerEmail: reported ? round(capacity.writeUnits / emailCount, 3) : null,
    readUnitsPerEmail: reported ? round(capacity.readUnits / emailCount, 3) : null,
    capacityReported: { asked: capacity.requestsAsked, reported: capacity.requestsReported },
    statusPublishesPerEmail: round((publishes.byTopic.get(status) ?? 0) / emailCount, 3),
    otherPublishes: all - (publishes.byTopic.get(status) ?? 0),
  };
}

type Counters = { dynamodb: DynamoDbRequestCounter; capacity: CapacityCounter; publishes: PublishCounter };

function newCounters(): Counters {
  return { dynamodb: new DynamoDbRequestCounter(), capacity: new CapacityCounter(), publishes: new PublishCounter() };
}

function resetCounters(counters: Counters): void {
  counters.dynamodb.reset();
  counters.capacity.reset();
  counters.publishes.byTopic.clear();
}

export async function measureLedger(
  stack: InProcessStack,
  options: {
    readonly batchSize: number;
    readonly memoryMb: number;
    readonly emailsPerRound: number;
    readonly rounds: number;
  },
): Promise<LedgerBenchResult> {
  const { batchSize, emailsPerRound, rounds } = options;
  let next = 2_000_000;

  // In order: Sends, then Deliveries, a round at a time; the warm-up round is neither timed nor counted.
  const counters = newCounters();
  const handler = newLedgerHandler(stack, counters);
  const samples: number[] = [];
  const cpu: number[] = [];
  const byType: Record<string, number[]> = {};
  let lifecycle: readonly string[] = [];
  const keys: string[] = [];
  try {
    for (let round_ = 0; round_ <= rounds; round_ += 1) {
      const warmUp = round_ === 0;
      const batch = await emails(stack, next, emailsPerRound);
      next += emailsPerRound;
      lifecycle = batch[0]?.types ?? [];
      for (const [position, type] of lifecycle.entries()) {
        const records = batch.map((email) => {
          if (email.types[position] !== type) throw new Error(`ledger: lifecycles differ (${email.types.join(', ')})`);
          return email.records[position] as SQSRecord;
        });
        for (const records_ of chunk(records, batchSize)) {
          const cpuBefore = process.cpuUsage();
          const started = performance.now();
          await handler.invoke(records_);
          const wallMs = performance.now() - started;
          const used = process.cpuUsage(cpuBefore);
          if (warmUp || records_.length < batchSize) continue;
          samples.push(wallMs);
          cpu.push((used.user + used.system) / 1000);
          (byType[type] ??= []).push(wallMs);
        }
      }
      // Counts from the timed rounds only, on the same (now warm) handler instance.
      if (warmUp) resetCounters(counters);
      else keys.push(...batch.map((e) => e.key));
    }
  } finally {
    handler.close();
  }
  await expectDelivered(stack, keys);
  const inOrderCounts = ledgerPhase(stack, keys.length, counters);

  // Same batch: each email's events next to each other.
  const sameCounters = newCounters();
  const sameHandler = newLedgerHandler(stack, sameCounters);
  const same = await emails(stack, next, emailsPerRound);
  try {
    for (const records of chunk(
      same.flatMap((e) => e.records),
      batchSize,
    )) {
      await sameHandler.invoke(records);
    }
  } finally {
    sameHandler.close();
  }
  await expectDelivered(
    stack,
    same.map((e) => e.key),
  );

  return {
    batchSize,
    memoryMb: options.memoryMb,
    lifecycle,
    eventsPerEmail: lifecycle.length,
    sqsRequestsPerEvent: round(2 / batchSize, 3),
    emailsPerRound,
    rounds,
    inOrder: {
      ...inOrderCounts,
      batchMs: round(median(samples), 1),
      batchMsByType: Object.fromEntries(Object.entries(byType).map(([type, ms]) => [type, round(median(ms), 1)])),
      cpuMsPerBatch: round(median(cpu), 1),
      samples: samples.map((x) => round(x, 1)),
    },
    sameBatch: ledgerPhase(stack, same.length, sameCounters),
    largestItemBytes: await largestItemBytes(stack.endpoints.dynamodb, stack.resources.ledger.tableName),
  };
}

/**
 * The cost model's ledger inputs from this measurement (in-order phase). Capacity units as
 * DynamoDB reported them when every request's answer carried them; otherwise one unit per
 * request, which holds while items stay below 1 KB (see largestItemBytes).
 */
export function ledgerCostInputs(result: LedgerBenchResult): LedgerCostInputs & { readonly unitsFrom: string } {
  const p = result.inOrder;
  const all = p.capacityReported.asked > 0 && p.capacityReported.reported === p.capacityReported.asked;
  const { perMessage } = p.dynamodb;
  const writeRequests = perMessage.PutItem + perMessage.UpdateItem + perMessage.DeleteItem;
  return {
    batchSize: result.batchSize,
    memoryMb: result.memoryMb,
    batchMs: p.batchMs,
    eventsPerEmail: result.eventsPerEmail,
    sqsRequestsPerEvent: result.sqsRequestsPerEvent,
    writeUnitsPerEmail: all && p.writeUnitsPerEmail !== null ? p.writeUnitsPerEmail : writeRequests,
    readUnitsPerEmail: all && p.readUnitsPerEmail !== null ? p.readUnitsPerEmail : perMessage.GetItem,
    statusPublishesPerEmail: p.statusPublishesPerEmail,
    unitsFrom: all ? 'ConsumedCapacity' : `requests (items below 1 KB: largest ${result.largestItemBytes} B)`,
  };
}
