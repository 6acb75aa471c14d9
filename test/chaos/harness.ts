/**
 * The chaos harness. One scenario is one run: a fresh pipeline on the emulators of the
 * global set-up, consumer processes ("pods") that each talk to SES through a fault proxy of
 * their own (and, when asked, to DynamoDB through one shared proxy), logical messages
 * ("units") that each know how they should end, faults injected while it runs, and the
 * account (account.ts) at the end.
 *
 * Fault injection lives here and in the fault proxies only: the pods run the production
 * bundle with no switch on. Each run leaves its figures in .local/chaos/results/<slug>.json,
 * which summary-reporter.js turns into the table printed at the end and .local/chaos-report.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { PipelineSettings } from '../../lib/settings';
import { LOCAL_DIR } from '../../tools/dev/local/paths';
import {
  delay,
  forwardThenReset,
  pass,
  startFaultProxy,
  type Behaviour,
  type FaultProxy,
} from '../../tools/dev/local/fault-proxy';
import { startSesFront, type SesFront } from '../../tools/dev/local/ses-front';
import type { Consumer, DecisionEvent } from '../../tools/dev/local/pipeline';
import { waitFor } from '../../tools/dev/local/processes';
import { drainQueue } from '../../tools/dev/local/queues';
import { email, FAST_RETRY_ENV, startTestPipeline, type TestPipeline } from '../integration/support';
import { account, type Account, type Crash, type Expect, type Unit } from './account';

export type { Expect, Unit };

/** Where each scenario leaves its figures for summary-reporter.js. */
export const RESULTS_DIR = path.join(LOCAL_DIR, 'chaos', 'results');

/**
 * FAST (support.ts) plus a receive budget that injected outages cannot use up: a good
 * message must never reach the DLQ because of a fault that passes; and an invocation long
 * enough that a batch never runs past it on a busy two-core machine (three pods, the
 * emulators and whatever else runs beside them). An invocation that times out after SES
 * accepted a send is an ambiguous event the scenarios do not inject: with FAST's 2 s, a
 * loaded machine made them happen and the duplicate storm sent twice. Nothing is killed in
 * most scenarios, so a longer timeout costs them nothing; the crash scenario, whose killed
 * pods' records come back only after the visibility timeout (6 x this), sets its own.
 */
export const CHAOS_SETTINGS: Partial<PipelineSettings> = { maxReceiveCount: 10, functionTimeoutSeconds: 10 };

/**
 * How long an unknown-fate send waits for its SES event in chaos runs: the production default
 * (300 s) scaled down with the faults, still far above the second or so the local SES and the
 * ledger consumer take to record a Send.
 */
export const CHAOS_GRACE_SECONDS = 15;

/** Seed of the fault schedule; set CHAOS_SEED to replay one. */
export const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);

/** One SendEmail as a pod's SES proxy sees it. */
export interface SesSend {
  /** 0-based position among all SendEmail requests of the run. */
  readonly index: number;
  readonly recipient: string;
  readonly pod: Pod;
}

export interface Pod {
  readonly name: string;
  readonly slot: number;
  readonly ses: FaultProxy;
  readonly started: Promise<Consumer>;
  killed: boolean;
  /** A crash-after-accept is on its way to this pod: no other fault may take it first. */
  crashPending: boolean;
  /** Recipients of the SendEmail requests this pod's proxy forwarded to SES. */
  readonly forwarded: string[];
}

export interface ScenarioResult extends Account {
  readonly order: number;
  readonly scenario: string;
  readonly seed: number;
  readonly consumers: number;
  /** Logical messages (a publisher retry or a redelivered copy is the same one). */
  readonly published: number;
  /** Messages put on the source queue (publisher retries and redelivered copies included). */
  readonly deliveries: number;
  /** Records the handlers decided on: sent, duplicate, dead-lettered or retry. */
  readonly decisions: number;
  /** The highest receive count any record reached (the redrive policy allows maxReceiveCount). */
  readonly maxReceiveCount: number;
  /** Crash-after-accept events injected through the SES proxies. */
  readonly crashesAfterAccept: number;
  readonly kills: number;
  /** Invocations that ran past the function timeout (their records went back to the queue). */
  readonly invocationTimeouts: number;
  readonly faults: readonly string[];
  readonly durationMs: number;
}

export interface ChaosOptions {
  /** Position in the summary table. */
  readonly order: number;
  readonly scenario: string;
  /** @default 3 */
  readonly consumers?: number;
  readonly settings?: Partial<PipelineSettings>;
  /** SES behaviour for each SendEmail, shared by all pods. @default pass */
  readonly ses?: (send: SesSend, run: ChaosRun) => Behaviour;
  /** Put one DynamoDB fault proxy in front of every pod ({@link ChaosRun.dynamodb}). @default false */
  readonly dynamodbProxy?: boolean;
  /** Extra pod environment, over FAST_RETRY_ENV. @default none */
  readonly env?: Readonly<Record<string, string>>;
  /** SEND_CONFIRMATION_GRACE_SECONDS of the pods. @default CHAOS_GRACE_SECONDS */
  readonly sendConfirmationGraceSeconds?: number;
  /**
   * Withhold the SES events of sends whose dedupe-key tag matches, until {@link ChaosRun.releaseEvents}:
   * the run gets an SES events layer of its own in front of the shared aws-ses-v2-local. @default none
   */
  readonly withholdEvents?: (dedupeKeyTag: string) => boolean;
}

/** mulberry32: small, seedable, good enough for a fault schedule. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `fn` over `items`, at most `limit` at a time. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

interface SendEmailBody {
  readonly Destination: { readonly ToAddresses?: readonly string[] };
}

/** The first line of an error's message. */
function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** A JSON body's fields, or none when it is not JSON. */
function jsonBody<T extends object>(body: Buffer): Partial<T> {
  try {
    return JSON.parse(body.toString('utf8')) as Partial<T>;
  } catch {
    return {};
  }
}

const live = new Set<ChaosRun>();
/** For afterEach: stops what a failed test left running. */
export async function stopRuns(): Promise<void> {
  await Promise.all([...live].map((run) => run.stop()));
}

export class ChaosRun {
  readonly random: () => number;
  readonly units: Unit[] = [];
  /** Notes on the faults injected, for the table. */
  readonly faults: string[] = [];
  readonly pods: Pod[] = [];
  private readonly crashes: Crash[] = [];
  private readonly restarts = new Set<Promise<Pod>>();
  private readonly chaos = new Set<Promise<void>>();
  private readonly problems: string[] = [];
  private readonly startedAt = Date.now();
  private deliveries = 0;
  private sesSends = 0;
  private unitCount = 0;
  private quiet = false;
  private settled: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;

  private constructor(
    readonly options: ChaosOptions,
    readonly p: TestPipeline,
    /** The DynamoDB proxy in front of every pod, when asked for. */
    readonly dynamodb: FaultProxy | undefined,
    /** The run's own SES events layer, when events are withheld. */
    readonly sesFront: SesFront | undefined,
  ) {
    this.random = seededRandom(SEED + options.order * 7919);
  }

  /** A pipeline with no pod yet: publish first, then {@link startPods}. */
  static async start(options: ChaosOptions): Promise<ChaosRun> {
    const withhold = options.withholdEvents;
    const sesFront = withhold
      ? await startSesFront({
          upstream: process.env.EMULATOR_SES_UPSTREAM_ENDPOINT ?? '',
          snsEndpoint: process.env.EMULATOR_SNS_ENDPOINT ?? '',
          holdEvents: (tags) => withhold(tags['dedupe-key'] ?? ''),
        })
      : undefined;
    const p = await startTestPipeline({
      consumers: [],
      settings: { ...CHAOS_SETTINGS, ...options.settings },
      ledger: true,
      sendConfirmationGraceSeconds: options.sendConfirmationGraceSeconds ?? CHAOS_GRACE_SECONDS,
      ...(sesFront ? { endpoints: { ses: sesFront.endpoint, mailboxUrl: `${sesFront.endpoint}/` } } : {}),
    });
    const dynamodb = options.dynamodbProxy ? await startFaultProxy({ target: p.endpoints.dynamodb }) : undefined;
    const run = new ChaosRun(options, p, dynamodb, sesFront);
    live.add(run);
    return run;
  }

  decisions(kind?: DecisionEvent['decision']): DecisionEvent[] {
    return this.p.decisions(kind);
  }

  // ------------------------------------------------------------------------------ publishing

  private newUnit(expect: Expect, label = ''): Unit {
    const id = `chaos-${++this.unitCount}`;
    const unit: Unit = { id, recipient: this.p.address(`${label}${id}`), expect };
    this.units.push(unit);
    return unit;
  }

  private async publishBody(message: string, key: string | undefined): Promise<string> {
    const { MessageId = '' } = await this.p.pipeline.sns.send(
      new PublishCommand({
        TopicArn: this.p.pipeline.resources.topicArn,
        Message: message,
        ...(key !== undefined
          ? { MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } } }
          : {}),
      }),
    );
    this.deliveries += 1;
    return MessageId;
  }

  /**
   * Publishes a valid email to a recipient of its own. With `key`, the publisher's
   * idempotency key; `publisherRetries` publishes it that many more times, as a publisher
   * that did not hear back would (new SNS MessageId, same key).
   */
  async publishEmail(options: { key?: string; publisherRetries?: number; label?: string } = {}): Promise<Unit> {
    const unit = this.newUnit('email', options.label);
    const message = JSON.stringify(email(unit.recipient, `Chaos ${unit.id}`, `Message ${unit.id}.`));
    const messageId = await this.publishBody(message, options.key);
    unit.key = options.key ?? messageId;
    for (let i = 0; i < (options.publisherRetries ?? 0); i += 1) await this.publishBody(message, options.key);
    return unit;
  }

  /** Publishes `count` valid emails; `options(i)` may give one a key and publisher retries. */
  async publishEmails(
    count: number,
    options: (i: number) => Parameters<ChaosRun['publishEmail']>[0] = () => ({}),
  ): Promise<Unit[]> {
    return inParallel(
      Array.from({ length: count }, (_, i) => i),
      16,
      (i) => this.publishEmail(options(i)),
    );
  }

  /**
   * Publishes any SNS message; `build` gets the unit's id and recipient (put the id in the
   * body, so the DLQ entry can be told apart). @default expect dead-letter
   */
  async publishMessage(
    build: (unit: Unit) => string | object,
    options: { key?: string; expect?: Expect; label?: string } = {},
  ): Promise<Unit> {
    const unit = this.newUnit(options.expect ?? 'dead-letter', options.label);
    const message = build(unit);
    const messageId = await this.publishBody(
      typeof message === 'string' ? message : JSON.stringify(message),
      options.key,
    );
    unit.key = options.key ?? messageId;
    return unit;
  }

  /** Sends a raw body straight to the queue (not an SNS envelope, no attributes): no dedupe key. */
  async sendRaw(build: (unit: Unit) => string): Promise<Unit> {
    const unit = this.newUnit('dead-letter');
    await this.p.pipeline.sqs.send(
      new SendMessageCommand({ QueueUrl: this.p.pipeline.resources.queueUrl, MessageBody: build(unit) }),
    );
    this.deliveries += 1;
    return unit;
  }

  /**
   * Before any pod runs: takes every envelope off the queue and puts each back `copies`
   * times, shuffled, as SNS and SQS redeliveries would (same body, same SNS MessageId).
   */
  async copyEnvelopes(copies: number): Promise<void> {
    if (this.pods.length > 0) throw new Error('copyEnvelopes: pods are already running');
    const { sqs, resources } = this.p.pipeline;
    const originals = await drainQueue(sqs, resources.queueUrl, this.deliveries, 60_000);
    const bodies = originals.flatMap((m) => Array.from({ length: copies }, () => m.Body ?? ''));
    for (let i = bodies.length - 1; i > 0; i -= 1) {
      const j = Math.floor(this.random() * (i + 1));
      [bodies[i], bodies[j]] = [bodies[j] ?? '', bodies[i] ?? ''];
    }
    const batches = Array.from({ length: Math.ceil(bodies.length / 10) }, (_, b) => bodies.slice(b * 10, b * 10 + 10));
    await inParallel(batches, 8, async (batch) => {
      const result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: resources.queueUrl,
          Entries: batch.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
        }),
      );
      if (result.Failed?.length) throw new Error(`could not enqueue ${result.Failed.length} copies`);
    });
    this.deliveries = bodies.length;
  }

  // ------------------------------------------------------------------------------ pods and faults

  /** Starts the pods (3 by default), each behind its own SES proxy. */
  async startPods(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.consumers ?? 3 }, (_, slot) => this.startPod(slot + 1)));
  }

  private async startPod(slot: number): Promise<Pod> {
    const generation = this.pods.filter((pod) => pod.slot === slot).length + 1;
    const name = generation === 1 ? `pod-${slot}` : `pod-${slot}.${generation}`;
    const ses = await startFaultProxy({ target: this.p.endpoints.ses });
    const env: Record<string, string> = {
      ...FAST_RETRY_ENV,
      ...this.options.env,
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
    };
    if (this.dynamodb) env.AWS_ENDPOINT_URL_DYNAMODB = this.dynamodb.endpoint;
    const pod: Pod = {
      name,
      slot,
      ses,
      started: this.p.pipeline.startConsumer({ name, env }),
      killed: false,
      crashPending: false,
      forwarded: [],
    };
    // Set in the same tick as the spawn: the pod cannot have sent anything yet.
    ses.set((request) => (request.operation === 'SendEmail' ? this.sesBehaviour(pod, request.body) : pass()));
    this.pods.push(pod);
    await pod.started;
    return pod;
  }

  private sesBehaviour(pod: Pod, body: Buffer): Behaviour {
    const recipient = jsonBody<SendEmailBody>(body).Destination?.ToAddresses?.[0] ?? '';
    const behaviour = this.options.ses?.({ index: this.sesSends++, recipient, pod }, this) ?? pass();
    if (behaviour.kind === 'pass' || behaviour.kind === 'forwardThenReset') pod.forwarded.push(recipient);
    return behaviour;
  }

  /**
   * SIGKILLs a pod (no clean-up, like a crash) and starts a new one in its slot. False when
   * the pod was already killed (by another fault) or the run is settling.
   */
  async kill(pod: Pod): Promise<boolean> {
    if (pod.killed || this.quiet) return false;
    pod.killed = true;
    await (await pod.started).kill();
    const restart = this.startPod(pod.slot);
    this.restarts.add(restart);
    restart.then(
      () => this.restarts.delete(restart),
      (error: unknown) => {
        this.restarts.delete(restart);
        this.problems.push(`could not restart ${pod.name}: ${firstLine(error)}`);
      },
    );
    return true;
  }

  /**
   * For the `ses` option: forwards the send, lets SES accept it, then SIGKILLs the pod
   * before the answer reaches it (between SES acceptance and the completion write).
   */
  crashAfterAccept(send: SesSend): Behaviour {
    if (send.pod.killed || send.pod.crashPending || this.quiet) return pass();
    send.pod.crashPending = true;
    return forwardThenReset(async (answer) => {
      if (answer.status >= 200 && answer.status < 300) {
        this.crashes.push({
          recipient: send.recipient,
          pod: send.pod.name,
          sesMessageId: jsonBody<{ MessageId: string }>(answer.body).MessageId,
        });
      }
      await this.kill(send.pod);
    });
  }

  /** In the background: SIGKILLs a random live pod once the handlers reach each number of decisions. */
  killAtProgress(thresholds: readonly number[]): void {
    const loop = (async () => {
      for (const threshold of [...thresholds].sort((a, b) => a - b)) {
        await waitFor(async () => this.quiet || this.decisions().length >= threshold, {
          what: `${threshold} decisions`,
          timeoutMs: 120_000,
          intervalMs: 50,
        });
        // A crash-after-accept may take the chosen pod down first: then choose again.
        for (;;) {
          if (this.quiet) return;
          const alive = this.pods.filter((pod) => !pod.killed && !pod.crashPending);
          const victim = alive[Math.floor(this.random() * alive.length)];
          if (victim && (await this.kill(victim))) break;
          if (!victim) {
            await waitFor(async () => this.quiet || this.pods.some((pod) => !pod.killed && !pod.crashPending), {
              what: 'a live pod to kill',
              timeoutMs: 30_000,
              intervalMs: 50,
            });
          }
        }
      }
    })().catch((error: unknown) => {
      this.problems.push(`random kills stopped: ${firstLine(error)}`);
    });
    this.chaos.add(loop);
  }

  /** Publishes the SES events withheld so far (see {@link ChaosOptions.withholdEvents}) and stops withholding. */
  releaseEvents(): Promise<void> {
    return this.sesFront?.release() ?? Promise.resolve();
  }

  /** Draws `count` distinct integers in [from, to). */
  pick(count: number, from: number, to: number): number[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, to - from)) chosen.add(from + Math.floor(this.random() * (to - from)));
    return [...chosen].sort((a, b) => a - b);
  }

  // ------------------------------------------------------------------------------ settling and the account

  private async outcomeCount(): Promise<number> {
    const recipients = new Set((await this.p.emails()).map((e) => e.destination.to[0]));
    const dlq = await this.p.pipeline.queueDepth('dlq');
    return this.units.filter((u) => recipients.has(u.recipient)).length + dlq.visible;
  }

  /**
   * Waits until every unit has an outcome and the queue is empty, with no restart pending
   * ({@link finish} does it too). A timeout is not thrown: the account then shows what was lost.
   */
  settle(timeoutMs = 120_000): Promise<void> {
    this.settled ??= waitFor(
      async () =>
        this.restarts.size === 0 &&
        (await this.p.pipeline.isDrained()) &&
        (await this.outcomeCount()) >= this.units.length,
      { what: 'every message settled', timeoutMs, intervalMs: 250 },
    ).catch((error: unknown) => {
      this.problems.push(`not settled: ${firstLine(error)}`);
    });
    return this.settled;
  }

  /** Consumer lines that mention `needle`, for a problem report. */
  private linesAbout(needle: string, max = 12): string[] {
    const FIELDS = [
      'timestamp',
      'decision',
      'sqsMessageId',
      'receiveCount',
      'errorCode',
      'sesMessageId',
      'note',
      'error',
    ];
    return this.p.pipeline.lines
      .filter((line) => line.text.includes(needle))
      .slice(0, max)
      .map((line) => {
        const json = line.json;
        const text = json
          ? JSON.stringify(Object.fromEntries(FIELDS.flatMap((f) => (f in json ? [[f, json[f]]] : []))))
          : line.text;
        return `[${line.consumer}] ${text.slice(0, 400)}`;
      });
  }

  /** Settles, stops faults and pods, counts the outcome, writes the figures and stops everything. */
  async finish(): Promise<ScenarioResult> {
    // Every scheduled fault first (their thresholds come before the end), then settle: a
    // fault still pending when the run settles would be skipped and the run would test less.
    await Promise.allSettled([...this.chaos]);
    await this.settle();
    this.quiet = true;
    await Promise.allSettled([...this.chaos, ...this.restarts]);
    this.dynamodb?.set(pass());
    await Promise.all(this.pods.filter((pod) => !pod.killed).map(async (pod) => (await pod.started).stop()));

    const emails = await this.p.emails();
    const dlqDepth = await this.p.pipeline.queueDepth('dlq');
    const letters =
      dlqDepth.visible > 0
        ? await drainQueue(this.p.pipeline.sqs, this.p.pipeline.resources.deadLetterQueueUrl, dlqDepth.visible)
        : [];
    const decisions = this.decisions();
    const killed = this.pods.filter((pod) => pod.killed);
    const outcome = account({
      units: this.units,
      emails,
      letters,
      decisions,
      crashes: this.crashes,
      killed,
      linesAbout: (needle, max) => this.linesAbout(needle, max),
    });
    const result: ScenarioResult = {
      order: this.options.order,
      scenario: this.options.scenario,
      seed: SEED,
      consumers: this.options.consumers ?? 3,
      published: this.units.length,
      deliveries: this.deliveries,
      decisions: decisions.length,
      maxReceiveCount: Math.max(0, ...decisions.map((d) => d.receiveCount ?? 0)),
      crashesAfterAccept: this.crashes.length,
      kills: killed.length,
      invocationTimeouts: this.p.pipeline.batches.filter((b) => /timed out/i.test(b.invocationError ?? '')).length,
      faults: [...this.faults],
      ...outcome,
      problems: [...this.problems, ...outcome.problems],
      durationMs: Date.now() - this.startedAt,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    const slug = this.options.scenario.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    writeFileSync(path.join(RESULTS_DIR, `${slug}.json`), `${JSON.stringify(result, null, 2)}\n`);
    if (result.duplicateLog.length > 0) {
      const list = result.duplicateLog.map(
        (d) => `  key=${d.key} to=${d.recipient} cause=${d.cause}${d.pod ? ` pod=${d.pod}` : ''}`,
      );
      console.log(
        `[chaos] ${this.options.scenario}: ${list.length} duplicate(s), each in the ambiguous window:\n${list.join('\n')}`,
      );
    }
    await this.stop();
    return result;
  }

  /** Stops pods, pipeline and proxies. Idempotent. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.quiet = true;
      live.delete(this);
      await Promise.allSettled([...this.restarts]);
      await this.p.stop();
      await Promise.all([...this.pods.map((pod) => pod.ses.close()), this.dynamodb?.close(), this.sesFront?.stop()]);
    })();
    return this.stopped;
  }
}

/**
 * A hung service, not a refusing one (a frozen process, an overloaded or partitioned endpoint):
 * every request is accepted and held without an answer until `until` (epoch ms), then
 * forwarded, as a process resumed after SIGSTOP would finally read its socket. A client that
 * gave up meanwhile sees its own timeout; the held request still reaches the service late.
 */
export function hungUntil(until: number): Behaviour {
  return delay(Math.max(0, until - Date.now()), pass());
}

/** The pass criteria every scenario shares. */
export function expectReliable(result: ScenarioResult): void {
  expect(result.problems).toEqual([]);
  expect(result.lost).toBe(0);
  expect(result.duplicateLog.filter((d) => d.cause === 'UNEXPLAINED')).toEqual([]);
  const ambiguous = Object.values(result.ambiguousEvents).reduce((a, b) => a + (b ?? 0), 0);
  expect(result.duplicates).toBeLessThanOrEqual(ambiguous);
}
