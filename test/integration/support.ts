/**
 * Shared set-up for the end-to-end tests: a fresh set of resources per test on
 * the emulators that the global set-up started, consumer processes running the
 * real handler bundle, helpers that wait on conditions (and `sleep`, the fixed wait for a
 * fault's length or for what must not happen), and the operator CLI run as a real process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PublishBatchCommand, PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { PipelineSettings } from '../../lib/settings';
import { buildBundles, type Bundles } from '../../tools/dev/local/build';
import { LOCAL_DIR, REPO_ROOT } from '../../tools/dev/local/paths';
import { readMailbox, type EmulatorEndpoints, type MailboxEmail } from '../../tools/dev/local/emulators';
import { LocalPipeline, type Consumer, type ConsumerOptions, type DecisionEvent } from '../../tools/dev/local/pipeline';
import { waitFor } from '../../tools/dev/local/processes';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { drainQueue } from '../../tools/dev/local/queues';
import { teamOutputs } from '../../tools/dev/local/team-topics';

export function endpointsFromEnv(): EmulatorEndpoints {
  const read = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: the integration global set-up did not run`);
    return value;
  };
  const ses = read('EMULATOR_SES_ENDPOINT');
  return {
    dynamodb: read('EMULATOR_DYNAMODB_ENDPOINT'),
    sns: read('EMULATOR_SNS_ENDPOINT'),
    sqs: read('EMULATOR_SQS_ENDPOINT'),
    ses,
    mailboxUrl: `${ses}/`,
  };
}

/** The time in whole epoch seconds, as DynamoDB TTLs and the SES emulator's `since` take it. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A name no other test uses: resources and recipients are scoped by it. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

let bundles: Promise<Bundles> | undefined;
/** Built once per test worker, in its own folder (workers run side by side). */
export function testBundles(): Promise<Bundles> {
  bundles ??= buildBundles(path.join(LOCAL_DIR, 'build-test', `worker-${process.env.JEST_WORKER_ID ?? '0'}`));
  return bundles;
}

/** Settings for tests: short timeouts so that redelivery happens in seconds. */
export const FAST: Partial<PipelineSettings> = {
  functionTimeoutSeconds: 2,
  maxBatchingWindowSeconds: 0,
  maxReceiveCount: 5,
  // Pacing off in effect (100 recipients a second for each of maxConcurrency containers):
  // the tests that are about pacing set their own rate.
  maxSendRate: 1000,
};

/** Consumer environment for tests: backoffs of about a second. */
export const FAST_RETRY_ENV = { RETRY_BASE_SECONDS: '1', SYSTEMIC_RETRY_SECONDS: '1', RETRY_CAP_SECONDS: '1' } as const;

/**
 * The confirmation grace of tests: an unknown-fate send waits this long for its SES event
 * (tests without the ledger consumer never get one, and so resend after it).
 */
export const TEST_GRACE_SECONDS = 5;

export interface TestPipelineOptions {
  readonly settings?: Partial<PipelineSettings>;
  /** One entry per consumer to start. @default one of the work queue, and one of each team's queue */
  readonly consumers?: readonly ConsumerOptions[];
  readonly endpoints?: Partial<EmulatorEndpoints>;
  /** Start the ledger consumer (SES events into the send ledger) too. @default false */
  readonly ledger?: boolean;
  /** Start the schedule consumer (scheduled mail waits in the schedule queue) too. @default false */
  readonly schedule?: boolean;
  /** SEND_CONFIRMATION_GRACE_SECONDS of the consumers. @default {@link TEST_GRACE_SECONDS} */
  readonly sendConfirmationGraceSeconds?: number;
  /** The flag file `email-pipeline pause` writes locally (the consumers honour it). @default none */
  readonly pauseFile?: string;
  /** The flag file of a local ledger DLQ redrive (the ledger consumer honours it). @default none */
  readonly ledgerRedriveFile?: string;
}

export interface TestPipeline {
  readonly pipeline: LocalPipeline;
  readonly name: string;
  readonly endpoints: EmulatorEndpoints;
  /** The consumers started with the pipeline. */
  readonly consumers: readonly Consumer[];
  /** An address unique to this pipeline: `<label>@<name>.example.com`. */
  address(label: string): string;
  publish(message: object, options?: { key?: string }): Promise<string>;
  /** Emails in the SES mailbox addressed to this pipeline's recipients. */
  emails(): Promise<MailboxEmail[]>;
  decisions(kind?: DecisionEvent['decision']): DecisionEvent[];
  stop(): Promise<void>;
}

export async function startTestPipeline(options: TestPipelineOptions = {}): Promise<TestPipeline> {
  const name = uniqueName();
  const endpoints = { ...endpointsFromEnv(), ...options.endpoints };
  const settings = loadLocalSettings({ ...FAST, ...options.settings });
  const pipeline = await LocalPipeline.create({
    name,
    settings,
    endpoints,
    bundles: await testBundles(),
    keepLines: true,
    sendConfirmationGraceSeconds: options.sendConfirmationGraceSeconds ?? TEST_GRACE_SECONDS,
    ...(options.pauseFile !== undefined ? { pauseFile: options.pauseFile } : {}),
    ...(options.ledgerRedriveFile !== undefined ? { ledgerRedriveFile: options.ledgerRedriveFile } : {}),
  });
  if (options.ledger) await pipeline.startLedgerConsumer();
  if (options.schedule) await pipeline.startScheduleConsumer();
  // By default one consumer of the work queue and one of each team's queue (their own mappings).
  const consumers: readonly ConsumerOptions[] = options.consumers ?? [
    {},
    ...Object.keys(settings.teams ?? {}).map((team) => ({ team })),
  ];
  const started = await Promise.all(
    consumers.map((consumer, i) =>
      pipeline.startConsumer({ name: `pod-${i + 1}`, ...consumer, env: { ...FAST_RETRY_ENV, ...consumer.env } }),
    ),
  );
  const domain = `${name}.example.com`;
  return {
    pipeline,
    name,
    endpoints,
    consumers: started,
    address: (label) => `${label}@${domain}`,
    publish: async (message, publishOptions = {}) => {
      const result = await pipeline.sns.send(
        new PublishCommand({
          TopicArn: pipeline.resources.topicArn,
          Message: JSON.stringify(message),
          ...(publishOptions.key !== undefined
            ? { MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: publishOptions.key } } }
            : {}),
        }),
      );
      return result.MessageId ?? '';
    },
    emails: async () => {
      const mailbox = await readMailbox(endpoints.ses);
      return mailbox.emails.filter((email) =>
        [...email.destination.to, ...email.destination.cc, ...email.destination.bcc].some((to) =>
          to.endsWith(`@${domain}`),
        ),
      );
    },
    decisions: (kind) => pipeline.decisions.filter((d) => kind === undefined || d.decision === kind),
    stop: () => pipeline.stop(),
  };
}

/** Waits for a condition; fails with `what` after the timeout. */
export function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  return waitFor(async () => condition(), { what, timeoutMs, intervalMs: 50 });
}

/**
 * Resolves after `ms` milliseconds. Only for a wait whose length is the point: a fault that lasts
 * that long, or the time given to something that must not happen; wait for a condition with {@link until}.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The emails among `emails` that have `to` among their To addresses. */
export function addressedTo(emails: readonly MailboxEmail[], to: string): MailboxEmail[] {
  return emails.filter((e) => e.destination.to.includes(to));
}

/** The emails in the SES emulator's mailbox at `sesEndpoint` that have `to` among their To addresses. */
export async function mailTo(sesEndpoint: string, to: string): Promise<MailboxEmail[]> {
  return addressedTo((await readMailbox(sesEndpoint)).emails, to);
}

/** What the pipeline's consumers printed that mentions `text` (a key, an address): for failure messages. */
export function linesAbout(p: TestPipeline, text: string): string[] {
  return p.pipeline.lines.filter((l) => l.text.includes(text)).map((l) => `${l.consumer}: ${l.text}`);
}

/** Takes one message off a queue (for tests that need a real SNS envelope). */
export async function receiveOne(pipeline: LocalPipeline, queueUrl: string): Promise<Message> {
  const [message] = await drainQueue(pipeline.sqs, queueUrl, 1);
  if (!message) throw new Error(`no message on ${queueUrl}`);
  return message;
}

/** Puts a body on the pipeline's queue as SNS would (the same envelope again). */
export async function enqueue(pipeline: LocalPipeline, body: string): Promise<void> {
  await pipeline.sqs.send(new SendMessageCommand({ QueueUrl: pipeline.resources.queueUrl, MessageBody: body }));
}

/** A valid simple email. */
export function email(to: string, subject = 'Your order', text = 'It shipped.'): Record<string, unknown> {
  return { to, subject, text };
}

/**
 * Publishes `count` emails on `topicArn` of `p`'s pipeline, keys `<prefix>-<i>` (each to its own
 * test address), ten to a PublishBatch.
 */
export async function publishMany(p: TestPipeline, topicArn: string, prefix: string, count: number): Promise<void> {
  for (let first = 0; first < count; first += 10) {
    const entries = Array.from({ length: Math.min(10, count - first) }, (_, j) => {
      const i = first + j;
      return {
        Id: `m${i}`,
        Message: JSON.stringify(email(p.address(`${prefix}-${i}`), `${prefix} ${i}`)),
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: `${prefix}-${i}` } },
      };
    });
    await p.pipeline.sns.send(new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries }));
  }
}

/** The first recipient of a queue body (an SNS envelope or a raw message), if any. */
export function recipientOf(body: string): string | undefined {
  try {
    const outer = JSON.parse(body) as { Type?: string; Message?: string; to?: unknown };
    const inner = (
      outer.Type === 'Notification' && typeof outer.Message === 'string' ? JSON.parse(outer.Message) : outer
    ) as {
      to?: unknown;
    };
    const to = Array.isArray(inner.to) ? inner.to[0] : inner.to;
    return typeof to === 'string' ? to : undefined;
  } catch {
    return undefined;
  }
}

export interface Outcome {
  readonly emails: number;
  readonly deadLettered: number;
}

/**
 * For the conservation check: how each recipient ended, as emails in the SES
 * mailbox and entries in the DLQ (drained: call once, at the end).
 */
export async function outcomes(
  p: TestPipeline,
  recipients: readonly string[],
  expectedDeadLetters = 0,
): Promise<Map<string, Outcome>> {
  const emails = await p.emails();
  const letters =
    expectedDeadLetters > 0
      ? await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, expectedDeadLetters)
      : [];
  const dlqDepth = await p.pipeline.queueDepth('dlq');
  if (dlqDepth.visible + dlqDepth.inFlight > 0) throw new Error('more DLQ entries than expected');
  const out = new Map<string, Outcome>();
  for (const recipient of recipients) {
    out.set(recipient, {
      emails: addressedTo(emails, recipient).length,
      deadLettered: letters.filter((m) => recipientOf(m.Body ?? '') === recipient).length,
    });
  }
  return out;
}

/** Every value the consumers printed in embedded metric format, by metric name. */
export function metricValues(p: TestPipeline): Record<string, number[]> {
  const values: Record<string, number[]> = {};
  for (const line of p.pipeline.lines) {
    const aws = line.json?._aws as { CloudWatchMetrics?: { Metrics?: { Name: string }[] }[] } | undefined;
    for (const directive of aws?.CloudWatchMetrics ?? []) {
      for (const { Name } of directive.Metrics ?? []) {
        const value = line.json?.[Name];
        const list = (values[Name] ??= []);
        for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'number') list.push(v);
      }
    }
  }
  return values;
}

/** The sum of each metric's values (counts), by metric name. */
export function metricTotals(p: TestPipeline): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metricValues(p)).map(([name, list]) => [name, list.reduce((a, b) => a + b, 0)]),
  );
}

/**
 * Writes the outputs.json of `p` into `stateDir`, as npm start does, for a CLI process to find it
 * (LOCAL_STATE_DIR): the queues, tables and endpoints, plus `extra` (PauseFile, LedgerRedriveFile) and
 * each team's own URLs (`teamUrls`: the local status server's `teams`).
 */
export function writeCliOutputs(
  stateDir: string,
  p: TestPipeline,
  extra: Record<string, string> = {},
  teamUrls: Parameters<typeof teamOutputs>[1] = {},
): void {
  const { resources } = p.pipeline;
  writeFileSync(
    path.join(stateDir, 'outputs.json'),
    JSON.stringify({
      TopicArn: resources.topicArn,
      QueueUrl: resources.queueUrl,
      DeadLetterQueueUrl: resources.deadLetterQueueUrl,
      TableName: resources.tableName,
      SnsEndpoint: p.endpoints.sns,
      SqsEndpoint: p.endpoints.sqs,
      DynamoDbEndpoint: p.endpoints.dynamodb,
      SesEndpoint: p.endpoints.ses,
      LedgerTableName: resources.ledger.tableName,
      LedgerBufferQueueUrl: resources.ledger.bufferQueueUrl,
      LedgerDeadLetterQueueUrl: resources.ledger.bufferDeadLetterQueueUrl,
      IdempotencyKeyPrefix: loadLocalSettings().idempotencyKeyPrefix,
      // As npm start writes them (state.ts): each team's topics, and its own URLs when it has them.
      ...(resources.teams ? { Teams: teamOutputs(resources.teams, teamUrls) } : {}),
      ...extra,
    }),
  );
}

export interface CliRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** tsx's command line, which runs a TypeScript entry point under node. */
export const TSX_CLI = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

/** The operator CLI's entry point: what `npm run dlq`, `npm run status` and the package's bin run. */
export const CLI_ENTRY = path.join(REPO_ROOT, 'bin', 'email-pipeline.ts');

/** The arguments of node that run the operator CLI with `args`. */
export function cliArgv(args: readonly string[]): string[] {
  return [TSX_CLI, CLI_ENTRY, ...args];
}

export interface CliOptions {
  /** @default 60 s */
  readonly timeoutMs?: number;
  /** Set over LOCAL_STATE_DIR and the rest of this process's environment; a value of undefined removes the variable. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default the repository's root */
  readonly cwd?: string;
}

/** This process's environment with LOCAL_STATE_DIR set to `stateDir`, then `env` over it (undefined removes). */
export function cliEnv(stateDir: string, env: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries({ ...process.env, LOCAL_STATE_DIR: stateDir, ...env }).filter(([, v]) => v !== undefined),
  );
}

/** Runs the operator CLI (bin/email-pipeline.ts, a real process) against the pipeline of `stateDir`. */
export function runCli(stateDir: string, args: readonly string[], options: CliOptions = {}): CliRun {
  const result = spawnSync(process.execPath, cliArgv(args), {
    cwd: options.cwd ?? REPO_ROOT,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    env: cliEnv(stateDir, options.env),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a process to its end without blocking this one (for a process that talks to a server this
 * test runs): its exit code and what it printed.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string },
): Promise<ProcessRun> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], {
      env: options.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
