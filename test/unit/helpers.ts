/**
 * The unit suite's helpers, so that each test states only what it is about.
 *
 * Builders for queue records: the shapes follow what SQS hands the function for
 * an SNS subscription with raw message delivery off (the envelope), and for a
 * message put straight on the queue (raw); and a whole Lambda `SQSRecord` with
 * defaults, for code that reads its attributes. The CLI run in this process, its
 * lines captured; a temporary folder, and an empty local state folder, for the
 * tests of a file or block. The local status endpoint with a cancel that records
 * what it cancelled. A local pipeline the CLI finds (its outputs.json) whose DynamoDB and SQS
 * commands a test answers in this process, each recorded. For the send pacing: a virtual clock, and the rate
 * lease's store in memory. An error shaped like Node's socket errors. And `sleep`,
 * a real wait, for the few tests that let real timers run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import type { LaneId } from '../../lambdas/send-email/send/lane-rates';
import type { QueueRecordLike } from '../../lambdas/send-email/parse';
import type { SlotStore, SlotWrite } from '../../lambdas/send-email/send/slot-store';
import { snsEnvelope } from '../../tools/dev/local/records';
import type { StatusEndpoint, StatusEndpointOptions } from '../../tools/dev/local/status-endpoint';

export const SNS_MESSAGE_ID = '5f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190';

/** The pipeline's own topic: the one the handler trusts. */
export const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:emails';

/** A message that meets the contract; spread it and override one field. */
export const validMessage = {
  to: ['ada@example.com'],
  subject: 'Your order has shipped',
  text: 'Order 42 is on its way.',
} as const;

export interface EnvelopeOptions {
  /** Sets the SNS message attribute `idempotency-key` (a String). */
  readonly key?: string;
  /** @default {@link TOPIC_ARN} */
  readonly topicArn?: string;
  /** Replaces or removes (undefined) fields of the envelope itself. */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** The SNS notification envelope around a message, as the SQS body. */
export function envelopeBody(message: unknown, options: EnvelopeOptions = {}): Record<string, unknown> {
  return {
    // The envelope carries the message as a JSON string; a string passes through unchanged.
    ...snsEnvelope(message, {
      messageId: SNS_MESSAGE_ID,
      topicArn: options.topicArn ?? TOPIC_ARN,
      ...(options.key !== undefined ? { key: options.key } : {}),
    }),
    SignatureVersion: '1',
    Signature: 'c2lnbmF0dXJl',
    SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/cert.pem',
    UnsubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe',
    ...options.fields,
  };
}

/** An SQS record whose body is the SNS envelope around `message`. */
export function envelope(message: unknown, options: EnvelopeOptions = {}): QueueRecordLike {
  return { body: JSON.stringify(envelopeBody(message, options)), messageAttributes: {} };
}

/** An SQS record whose body is the message itself, with an optional SQS `idempotency-key` attribute. */
export function raw(message: unknown, options: { readonly key?: string } = {}): QueueRecordLike {
  return {
    body: JSON.stringify(message),
    messageAttributes: options.key !== undefined ? { 'idempotency-key': { stringValue: options.key } } : {},
  };
}

/** An SQS record with a body given verbatim. */
export function body(text: string): QueueRecordLike {
  return { body: text, messageAttributes: {} };
}

/** The queue a {@link sqsRecord} comes from unless told otherwise. */
export const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:emails';

/** When a {@link sqsRecord} reached the queue unless told otherwise (epoch milliseconds). */
export const SENT_AT = Date.UTC(2026, 11, 24, 8, 0, 0);

/** What a test says about its {@link sqsRecord}; every field it leaves out takes the default. */
export interface SqsRecordOverrides extends Partial<Omit<SQSRecord, 'attributes' | 'messageAttributes'>> {
  /**
   * When the message reached the queue (epoch milliseconds): its SentTimestamp and
   * ApproximateFirstReceiveTimestamp. @default {@link SENT_AT}
   */
  readonly sentAt?: number;
  /** Replaces single SQS attributes (after `sentAt`), e.g. ApproximateReceiveCount. */
  readonly attributes?: Partial<SQSRecord['attributes']>;
  /** Message attributes by name, each a String, as the pipeline writes its own. @default none */
  readonly messageAttributes?: Readonly<Record<string, string>>;
}

/**
 * A Lambda SQS record as the event source hands it over: a first receive of message `m-1`
 * (receipt handle `r-` and its id) from {@link QUEUE_ARN}, body `{}`, no message attributes;
 * `overrides` replaces what the test is about.
 */
export function sqsRecord(overrides: SqsRecordOverrides = {}): SQSRecord {
  const { sentAt = SENT_AT, attributes, messageAttributes = {}, ...fields } = overrides;
  const messageId = fields.messageId ?? 'm-1';
  return {
    messageId,
    receiptHandle: `r-${messageId}`,
    body: '{}',
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'eu-west-1',
    ...fields,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(sentAt),
      SenderId: 'AIDAIENQZJOLO23YVJ4VO',
      ApproximateFirstReceiveTimestamp: String(sentAt),
      ...attributes,
    },
    messageAttributes: Object.fromEntries(
      Object.entries(messageAttributes).map(([name, value]) => [
        name,
        { dataType: 'String', stringValue: value, stringListValues: [], binaryListValues: [] },
      ]),
    ),
  };
}

/** `count` distinct valid addresses. */
export function addresses(count: number, prefix = 'user'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}@example.com`);
}

/** Every order of `items` (n! of them). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Output lines captured: `io` is what the CLI writes to, `out` and `err` what it wrote. */
export function capture(): {
  io: { out: (l: string) => void; err: (l: string) => void };
  out: string[];
  err: string[];
} {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

/** The CLI run in this process with `args`: its exit code and what it printed. */
export async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // Loaded on first use, so that the tests of queue records do not load the CLI.
  const { run } = await import('../../lib/cli/main');
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** An error shaped like Node's socket errors (what the SDK's HTTP handler passes on). */
export function nodeError(
  code: string,
  message = `connect ${code} 127.0.0.1:443`,
  name = 'Error',
): Error & { code: string } {
  return Object.assign(new Error(message), { code, name });
}

/** Resolves after `ms` milliseconds of real time (tests on a virtual clock use {@link VirtualClock}). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Points LOCAL_STATE_DIR at a new empty folder for the test file (before its tests; removed, and
 * the variable put back, after them): no local pipeline there, so a CLI command that gets as far
 * as looking for one fails with 1. Returns the folder's path, once the tests run.
 */
export function emptyStateDir(prefix: string): () => string {
  const dir = tempDir(prefix);
  const saved = process.env.LOCAL_STATE_DIR;
  beforeAll(() => {
    process.env.LOCAL_STATE_DIR = dir();
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.LOCAL_STATE_DIR;
    else process.env.LOCAL_STATE_DIR = saved;
  });
  return dir;
}

/**
 * A new empty folder for the tests of the enclosing describe block (or file): made before they
 * run, removed after. Returns its path, once the tests run.
 */
export function tempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (dir === undefined) throw new Error('the folder is made before the tests run');
    return dir;
  };
}

/**
 * The local status endpoint on a free port: `lookup` answers its status URL, and every cancel at
 * its cancel URL succeeds, its key kept in `cancelled`. Close `server` when done.
 */
export async function startCancellingEndpoint(
  lookup: StatusEndpointOptions['lookup'],
): Promise<{ server: StatusEndpoint; cancelled: string[] }> {
  // Loaded on first use, as the CLI is: most tests of this suite need no server.
  const { startStatusEndpoint } = await import('../../tools/dev/local/status-endpoint');
  const cancelled: string[] = [];
  const server = await startStatusEndpoint({
    port: 0,
    lookup,
    cancel: async (key, team) => {
      const named = team !== undefined ? `${team}#${key}` : key;
      cancelled.push(named);
      return { outcome: 'cancelled', report: { key: named, status: 'cancelled', events: [] } };
    },
  });
  return { server, cancelled };
}

/** A virtual clock: sleepers wake in time order; time moves only when nothing else can run. */
export class VirtualClock {
  t = 1_000_000;
  private timers: { at: number; resolve: () => void }[] = [];
  now = (): number => this.t;
  sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      this.timers.push({ at: this.t + Math.max(0, ms), resolve });
    });
  /** Runs until `done` resolves (or the virtual time passes `limitMs`). */
  async run(done: Promise<unknown>, limitMs = 600_000): Promise<void> {
    let finished = false;
    void done.then(() => (finished = true));
    const end = this.t + limitMs;
    while (!finished && this.t < end) {
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      if (finished) break;
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers.shift();
      if (!next) continue;
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
  }
}

/**
 * The store's semantics in memory, with its writes counted. A stored value may be anything (a
 * string, an object), as an item written by hand may be; comparisons with one of another type
 * fail, as DynamoDB's do.
 */
export class FakeSlotStore implements SlotStore {
  readonly next = new Map<LaneId, unknown>();
  /** The end of each lane's own last lease (or its sibling's holding borrow). */
  readonly owner = new Map<LaneId, number>();
  /** The lane that wrote `owner`. */
  readonly holder = new Map<LaneId, LaneId>();
  writes = 0;
  repairs = 0;
  failing = false;
  /** What a failed write answers about a stored value: `next` only when it is a number. */
  private failed(lane: LaneId, current: unknown): SlotWrite {
    const owner = {
      ...(this.owner.has(lane) ? { owner: this.owner.get(lane)! } : {}),
      ...(this.holder.has(lane) ? { holder: this.holder.get(lane)! } : {}),
    };
    if (current === undefined) return { ok: false, ...owner };
    return typeof current === 'number'
      ? { ok: false, next: current, found: current, ...owner }
      : { ok: false, found: current, ...owner };
  }
  /** A borrow (`idleBefore` set) while the owner leased since: refused, unless the borrower holds it. */
  private ownerBusy(lane: LaneId, idleBefore: number | undefined, holder: LaneId | undefined): boolean {
    const owner = this.owner.get(lane);
    if (holder !== undefined && this.holder.get(lane) === holder) return false;
    return idleBefore !== undefined && owner !== undefined && owner >= idleBefore;
  }
  /** The owner's write, or a holding borrow's: records `owner` and `holder`. */
  private own(lane: LaneId, next: number, idleBefore: number | undefined, holder: LaneId | undefined): void {
    if (idleBefore !== undefined && holder === undefined) return;
    this.owner.set(lane, next);
    this.holder.set(lane, holder ?? lane);
  }
  async advance(
    lane: LaneId,
    span: number,
    lower: number,
    upper: number,
    idleBefore?: number,
    holder?: LaneId,
  ): Promise<SlotWrite> {
    this.writes += 1;
    if (this.failing) throw new Error('DynamoDB unavailable');
    const current = this.next.get(lane);
    if (
      typeof current !== 'number' ||
      !(current >= lower && current <= upper) ||
      this.ownerBusy(lane, idleBefore, holder)
    ) {
      return this.failed(lane, current);
    }
    this.next.set(lane, current + span);
    this.own(lane, current + span, idleBefore, holder);
    return { ok: true, next: current + span };
  }
  async restart(lane: LaneId, value: number, before: number, idleBefore?: number, holder?: LaneId): Promise<SlotWrite> {
    this.writes += 1;
    if (this.failing) throw new Error('DynamoDB unavailable');
    const current = this.next.get(lane);
    if (
      (current !== undefined && !(typeof current === 'number' && current < before)) ||
      this.ownerBusy(lane, idleBefore, holder)
    ) {
      return this.failed(lane, current);
    }
    this.next.set(lane, value);
    this.own(lane, value, idleBefore, holder);
    return { ok: true, next: value };
  }
  async repair(lane: LaneId, found: unknown, value: number): Promise<SlotWrite> {
    this.writes += 1;
    if (this.failing) throw new Error('DynamoDB unavailable');
    const current = this.next.get(lane);
    if (JSON.stringify(current) !== JSON.stringify(found)) return this.failed(lane, current);
    this.repairs += 1;
    this.next.set(lane, value);
    return { ok: true, next: value };
  }
}

/** A command a client of the fake local pipeline was sent: its class name and input. */
export interface SentCommand {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** What the fake local pipeline answers a command with (its output), or throws. */
export type Answer = (command: SentCommand) => unknown;

/**
 * A local pipeline for the CLI of the tests in the enclosing describe block (or file): an
 * outputs.json in a temporary LOCAL_STATE_DIR naming its tables and queues, and a server at its SQS
 * endpoint (the CLI checks that something answers there). Every command a DynamoDB document client
 * or an SQS client sends is recorded in `sent` and answered by `answer` (set it per test; by default
 * `{}`, and no messages). Returns the pipeline's outputs and what was sent, once the tests run.
 */
export function fakeLocalPipeline(): {
  readonly outputs: Readonly<Record<string, string>>;
  readonly sent: SentCommand[];
  answer: Answer;
} {
  const dir = tempDir('fake-pipeline-');
  const saved = process.env.LOCAL_STATE_DIR;
  const outputs: Record<string, string> = {
    TableName: 'claims',
    LedgerTableName: 'ledger',
    IdempotencyKeyPrefix: 'email-pipeline',
    QueueUrl: 'http://sqs.local/000000000000/emails',
    DeadLetterQueueUrl: 'http://sqs.local/000000000000/emails-dlq',
  };
  const fake = { outputs, sent: [] as SentCommand[], answer: (() => ({})) as Answer };
  let server: Server | undefined;
  const record = async function (this: unknown, command: unknown): Promise<unknown> {
    const sent = {
      name: (command as { constructor: { name: string } }).constructor.name,
      input: (command as { input: Record<string, unknown> }).input,
    };
    fake.sent.push(sent);
    return fake.answer(sent);
  };
  beforeAll(async () => {
    server = createServer((_, response) => response.end('{}'));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    outputs.SqsEndpoint = `http://127.0.0.1:${port}`;
    outputs.DynamoDbEndpoint = `http://127.0.0.1:${port}`;
    writeFileSync(path.join(dir(), 'outputs.json'), JSON.stringify(outputs));
    process.env.LOCAL_STATE_DIR = dir();
  });
  beforeEach(() => {
    fake.sent.length = 0;
    fake.answer = () => ({});
    jest.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(record as never);
    jest.spyOn(SQSClient.prototype, 'send').mockImplementation(record as never);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.LOCAL_STATE_DIR;
    else process.env.LOCAL_STATE_DIR = saved;
    await new Promise((resolve) => server?.close(resolve));
  });
  return fake;
}
