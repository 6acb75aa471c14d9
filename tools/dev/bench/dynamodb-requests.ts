/**
 * Item 2: DynamoDB requests per unique message and per duplicate, counted at the SDK.
 * N unique messages go through one handler in batches; then the same N SNS MessageIds
 * arrive again (new SQS message ids) in separate invocations of a second handler instance;
 * then N/2 new ids arrive twice each within one batch (a third handler instance).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { emulatorConfig } from '../local/emulator-config';
import {
  benchEmail,
  chunk,
  FakeSes,
  newHandler,
  runBatches,
  snsRecord,
  type CommandCount,
  type InProcessStack,
} from './in-process';
import { round } from './stats';

export const COUNTED_COMMANDS = ['PutItem', 'UpdateItem', 'GetItem', 'BatchGetItem', 'DeleteItem'] as const;
export type CountedCommand = (typeof COUNTED_COMMANDS)[number];

export interface PhaseCounts {
  /** Messages (or pairs) the counts are divided by. */
  readonly messages: number;
  /** Commands per message, by name. */
  readonly perMessage: Readonly<Record<CountedCommand, number>>;
  /** All DynamoDB commands per message (any name). */
  readonly commandsPerMessage: number;
  /** HTTP attempts per message: above commandsPerMessage means SDK retries. */
  readonly attemptsPerMessage: number;
  /** Errors raised by the commands, by command and error name. */
  readonly errors: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Failed conditional writes that returned the old item (so no read was needed). */
  readonly oldItemReturned: number;
  readonly emailsSent: number;
}

export interface DynamoDbRequestsResult {
  readonly batchSize: number;
  /** Largest idempotency record after the run, by DynamoDB's item-size rules (1 write unit per 1 KB). */
  readonly largestItemBytes: number;
  readonly unique: PhaseCounts;
  /** Counts per duplicate, arriving in a later invocation. */
  readonly duplicate: PhaseCounts;
  /** Counts per pair (original + copy) when both arrive in the same batch. */
  readonly sameBatchPair: PhaseCounts;
}

/** Counts per message (or per email, pair), from a counter's snapshot. */
export function phaseCounts(messages: number, counts: Record<string, CommandCount>): Omit<PhaseCounts, 'emailsSent'> {
  const all = Object.values(counts);
  const per = (n: number) => round(n / messages, 3);
  const perMessage = Object.fromEntries(
    COUNTED_COMMANDS.map((name) => [name, per(counts[name]?.calls ?? 0)]),
  ) as Record<CountedCommand, number>;
  return {
    messages,
    perMessage,
    commandsPerMessage: per(all.reduce((sum, c) => sum + c.calls, 0)),
    attemptsPerMessage: per(all.reduce((sum, c) => sum + c.attempts, 0)),
    errors: Object.fromEntries(
      Object.entries(counts)
        .filter(([, c]) => Object.keys(c.errors).length > 0)
        .map(([n, c]) => [n, c.errors]),
    ),
    oldItemReturned: all.reduce((sum, c) => sum + c.oldItemReturned, 0),
  };
}

function phase(messages: number, counts: Record<string, CommandCount>, emailsSent: number): PhaseCounts {
  return { ...phaseCounts(messages, counts), emailsSent };
}

export async function measureDynamoDbRequests(
  stack: InProcessStack,
  messages: number,
): Promise<DynamoDbRequestsResult> {
  const batchSize = stack.settings.batchSize;
  const ses = new FakeSes(0);
  // One email per SNS MessageId, the same in every phase (another email under a used key is dead-lettered).
  const emailNumbers = new Map<string, number>();
  const emailFor = (id: string) => {
    if (!emailNumbers.has(id)) emailNumbers.set(id, emailNumbers.size);
    return benchEmail(emailNumbers.get(id) ?? 0);
  };
  /** Runs batches of these SNS MessageIds through a new handler instance (a new container). */
  const phaseOf = async (ids: readonly string[], per: number): Promise<PhaseCounts> => {
    stack.counter.reset();
    const sentBefore = ses.sent;
    const handler = newHandler(stack, { ses, processInParallel: true, idempotency: true });
    const records = ids.map((id) => snsRecord(stack, id, emailFor(id)));
    try {
      await runBatches(handler.invoke, chunk(records, batchSize));
    } finally {
      handler.close();
    }
    return phase(per, stack.counter.snapshot(), ses.sent - sentBefore);
  };

  const ids = Array.from({ length: messages }, () => randomUUID());
  const unique = await phaseOf(ids, messages);
  // The same SNS MessageIds again, in later invocations.
  const duplicate = await phaseOf(ids, messages);
  // New ids, each delivered twice within one batch (adjacent records).
  const pairs = Array.from({ length: messages / 2 }, () => randomUUID());
  const sameBatchPair = await phaseOf(
    pairs.flatMap((id) => [id, id]),
    pairs.length,
  );
  return {
    batchSize,
    largestItemBytes: await largestItemBytes(stack.endpoints.dynamodb, stack.resources.tableName),
    unique,
    duplicate,
    sameBatchPair,
  };
}

/** DynamoDB's item size: attribute names plus values (numbers about 1 byte per 2 digits + 1). */
function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\./g, '').length / 2) + 1;
  if (value.B !== undefined) return value.B.length;
  if (value.SS !== undefined) return value.SS.reduce((sum, v) => sum + Buffer.byteLength(v), 0);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.M !== undefined) return 3 + itemBytes(value.M) + Object.keys(value.M).length;
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + valueBytes(v) + 1, 0);
  return Buffer.byteLength(JSON.stringify(value));
}

function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/** The largest item of a table by DynamoDB's item-size rules; scans with a client of its own (not counted). */
export async function largestItemBytes(endpoint: string, tableName: string): Promise<number> {
  const client = new DynamoDBClient(emulatorConfig(endpoint));
  try {
    let largest = 0;
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) largest = Math.max(largest, itemBytes(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return largest;
  } finally {
    client.destroy();
  }
}
