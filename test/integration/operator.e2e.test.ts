/**
 * The operator commands as an operator runs them (a real CLI process) against a local pipeline
 * whose consumers run the real bundles, both lanes: pause and resume (pause returns once every
 * consumer has stopped, so nothing published after it returns is sent, failed or dead-lettered
 * before resume; each message sent once after), deliveries by outcome after simulator bounces,
 * selective redrive and delete, and resend (released, recorded, sent again), each change with --yes
 * or --dry-run. Every wait is on a condition: the queue holding the messages, the consumers' paused polls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DLQ_ATTRIBUTE } from '../../lambdas/kernel/names';
import { takeMessage } from '../../tools/dev/local/queues';
import {
  addressedTo,
  linesAbout,
  runCli,
  startTestPipeline,
  writeCliOutputs,
  until,
  type TestPipeline,
} from './support';

let p: TestPipeline;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'operator-state-'));
  const pauseFile = path.join(stateDir, 'send-paused');
  p = await startTestPipeline({ ledger: true, pauseFile, consumers: [{}, {}, { lane: 'high', name: 'high-1' }] });
  writeCliOutputs(stateDir, p, { PauseFile: pauseFile });
});
afterAll(async () => {
  await p?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const cli = (args: readonly string[]) => runCli(stateDir, args);

/** Paused polls the consumers reported so far, per consumer. */
function pausedPolls(): Map<string, number> {
  const polls = new Map<string, number>();
  for (const line of p.pipeline.lines) {
    if (line.json?.event === 'paused') polls.set(line.consumer, Number(line.json.polls));
  }
  return polls;
}

/** Waits until every send consumer has skipped at least `more` receives beyond `since` while paused. */
async function consumersPausedFor(more: number, since = new Map<string, number>()): Promise<Map<string, number>> {
  await until(`every consumer to skip ${more} receives while paused`, () => {
    const now = pausedPolls();
    return p.consumers.every((c) => (now.get(c.name) ?? 0) >= (since.get(c.name) ?? 0) + more);
  });
  return pausedPolls();
}

async function depth(which: 'queue' | 'high' | 'dlq'): Promise<number> {
  const d = await p.pipeline.queueDepth(which);
  return d.visible + d.inFlight + d.delayed;
}

/**
 * Pauses with the CLI. Nothing more is waited for: pause returns once every consumer, of both lanes,
 * has finished its batch in hand and stopped receiving.
 */
async function pause(): Promise<void> {
  const run = cli(['pause']);
  expect(run).toMatchObject({ status: 0 });
  expect(run.stdout).toContain('Sending is paused on the local pipeline');
  expect(run.stderr).toContain('Sending has stopped: 3 event source(s) of the send function are Disabled');
}

/** Publishes straight to a topic (no CLI process in between): the high-priority topic when asked. */
async function publishNow(to: string, key: string, priority?: 'high'): Promise<void> {
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: priority === 'high' ? p.pipeline.resources.highPriorityTopicArn : p.pipeline.resources.topicArn,
      Message: JSON.stringify({ to, subject: 'Paused', text: 'Later.' }),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } },
    }),
  );
}

afterEach(() => {
  cli(['resume']);
});

test('pause: nothing published after it returns is sent before resume, on either lane; resume: each is sent once', async () => {
  // The consumers are idle, each in a long poll, when pause is asked for.
  await pause();
  // At once, without waiting for anything: a consumer still receiving would take these.
  const recipients = [1, 2, 3].map((i) => p.address(`paused-${i}`));
  await publishNow(recipients[0] ?? '', `paused-0-${p.name}`);
  await publishNow(recipients[1] ?? '', `paused-1-${p.name}`, 'high');
  await publishNow(recipients[2] ?? '', `paused-2-${p.name}`);
  const batchesBefore = p.pipeline.batches.length;

  const show = cli(['pause', '--show', '--json']);
  expect(show).toMatchObject({ status: 0 });
  const state = JSON.parse(show.stdout) as {
    paused: boolean;
    stopped: boolean;
    sources: { id: string; state: string }[];
  };
  expect(state).toMatchObject({ paused: true, stopped: true });
  expect(state.sources.map((s) => [s.id, s.state]).sort()).toEqual([
    ['high-1', 'Disabled'],
    ['pod-1', 'Disabled'],
    ['pod-2', 'Disabled'],
  ]);

  // Each queue holds its own lane's messages only (the high-priority topic is the high queue's one source).
  await until(
    'the messages waiting in both queues',
    async () =>
      (await p.pipeline.queueDepth('queue')).visible === 2 && (await p.pipeline.queueDepth('high')).visible === 1,
  );
  // The consumers kept looking while the messages waited, and took none.
  const seen = await consumersPausedFor(8, pausedPolls());
  expect(seen.size).toBe(3);
  expect(p.pipeline.batches.length).toBe(batchesBefore);
  expect(await p.emails()).toHaveLength(0);
  expect(await depth('dlq')).toBe(0);

  const resumed = cli(['resume']);
  expect(resumed).toMatchObject({ status: 0 });
  expect(resumed.stdout).toContain('Sending is on for the local pipeline');
  await until('three emails', async () => (await p.emails()).length === 3, 30_000);
  await until('the queues drained', () => p.pipeline.isDrained());
  const emails = await p.emails();
  for (const to of recipients) expect(addressedTo(emails, to)).toHaveLength(1);
  expect(await depth('dlq')).toBe(0);
});

test('deliveries lists the keys that bounced, newest first, with --since and --json', async () => {
  const keys = ['bounce-a', 'bounce-b'].map((k) => `${k}-${p.name}`);
  for (const key of keys)
    await p.publish({ to: `bounce+${key}@simulator.amazonses.com`, subject: 'B', text: 'B' }, { key });
  await p.publish({ to: p.address('fine'), subject: 'D', text: 'D' }, { key: `delivered-${p.name}` });
  const listed = () => cli(['deliveries', '--outcome', 'bounced', '--since', '10m', '--json']);
  await until(
    'both bounces indexed',
    () => {
      const run = listed();
      return keys.every((k) => run.stdout.includes(`"${k}"`));
    },
    30_000,
  );
  const rows = listed()
    .stdout.trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { key: string; status: string; updatedAt: string });
  expect(rows.filter((r) => keys.includes(r.key)).map((r) => r.status)).toEqual(['bounced', 'bounced']);
  expect(rows.map((r) => r.updatedAt)).toEqual([...rows.map((r) => r.updatedAt)].sort().reverse());
  expect(rows.some((r) => r.key === `delivered-${p.name}`)).toBe(false);
  const text = cli(['deliveries', '--outcome', 'bounced']);
  expect(text).toMatchObject({ status: 0 });
  expect(text.stdout).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+ {2}${keys[0]}$`, 'm'));
  // The old spelling still lists them, with a warning.
  const old = cli(['deliveries', '--status', 'bounced']);
  expect(old).toMatchObject({ status: 0, stdout: text.stdout });
  expect(old.stderr).toContain('deliveries --status is deprecated: use deliveries --outcome');
  expect(cli(['deliveries', '--outcome', 'bounced', '--since', '2999-01-01']).stdout).toBe('');
  expect(cli(['deliveries', '--outcome', 'bouncd'])).toMatchObject({ status: 2 });
});

/** The idempotency key an SNS envelope carries as a message attribute. */
function envelopeKey(body: string | undefined): string | undefined {
  try {
    return (JSON.parse(body ?? '') as { MessageAttributes?: Record<string, { Value?: string }> }).MessageAttributes?.[
      'idempotency-key'
    ]?.Value;
  } catch {
    return undefined;
  }
}

/** Puts a real envelope of `key` into the DLQ as the send function would after the retry budget. */
async function deadLetterOf(key: string, to: string): Promise<void> {
  await p.publish({ to, subject: 'Retry', text: 'Finally.' }, { key });
  // This key's envelope, not whatever else the work queue holds (a batch an earlier test timed out
  // comes back after the visibility timeout): that one is left for the consumers.
  const message = await takeMessage(p.pipeline.sqs, p.pipeline.resources.queueUrl, (m) => envelopeKey(m.Body) === key);
  const attr = (value: string) => ({ DataType: 'String', StringValue: value });
  await p.pipeline.sqs.send(
    new SendMessageCommand({
      QueueUrl: p.pipeline.resources.deadLetterQueueUrl,
      MessageBody: message.Body ?? '',
      MessageAttributes: {
        [DLQ_ATTRIBUTE.errorClass]: attr('retryable'),
        [DLQ_ATTRIBUTE.errorCode]: attr('RetryBudgetExhausted'),
        [DLQ_ATTRIBUTE.reason]: attr('retry budget spent: SES throttled'),
        [DLQ_ATTRIBUTE.dedupeKey]: attr(key),
        [DLQ_ATTRIBUTE.failedAt]: attr(new Date().toISOString()),
      },
    }),
  );
}

test('selective redrive and delete: by key and code; codes a redrive cannot fix are refused', async () => {
  await p.pipeline.sns.send(new PublishCommand({ TopicArn: p.pipeline.resources.topicArn, Message: 'not json' }));
  await until('the InvalidJson dead letter', async () => (await depth('dlq')) === 1);
  await pause();
  const [ka, kb] = [`redrive-a-${p.name}`, `redrive-b-${p.name}`];
  const [ta, tb] = [p.address('redrive-a'), p.address('redrive-b')];
  await deadLetterOf(ka, ta);
  await deadLetterOf(kb, tb);
  expect(cli(['resume'])).toMatchObject({ status: 0 });
  await until('three dead letters', async () => (await p.pipeline.queueDepth('dlq')).visible === 3);

  const summary = cli(['dlq', 'list', '--summary']);
  expect(summary).toMatchObject({ status: 0 });
  expect(summary.stdout).toMatch(/^ +2 {2}retryable +RetryBudgetExhausted$/m);
  expect(summary.stdout).toMatch(/^ +1 {2}permanent +InvalidJson {2}\(never redriven: /m);

  const refused = cli(['dlq', 'redrive', '--code', 'InvalidJson', '--yes']);
  expect(refused).toMatchObject({ status: 1 });
  expect(refused.stderr).toContain('InvalidJson is never redriven: the body is not JSON');

  const dry = cli(['dlq', 'redrive', '--key', ka, '--key', kb, '--dry-run']);
  expect(dry).toMatchObject({ status: 0 });
  expect(dry.stdout).toContain(`Would move 2 message(s) with key ${ka} or ${kb} from the DLQ of the local pipeline`);
  expect(dry.stdout).toContain('Nothing was changed (--dry-run).');
  expect((await p.pipeline.queueDepth('dlq')).visible).toBe(3);

  const moved = cli(['dlq', 'redrive', '--key', ka, '--yes']);
  expect(moved).toMatchObject({ status: 0 });
  expect(moved.stdout).toContain(`Moved 1 message(s) with key ${ka} from the DLQ of the local pipeline`);
  await until('the redriven email', async () => addressedTo(await p.emails(), ta).length > 0, 30_000);

  const deleted = cli(['dlq', 'delete', '--key', kb, '--yes', '--json']);
  expect(deleted).toMatchObject({ status: 0 });
  expect(JSON.parse(deleted.stdout)).toMatchObject({ action: 'delete', queue: 'send', keys: [kb], deleted: 1 });
  expect(cli(['dlq', 'list', '--key', kb]).stdout).toContain('holds no such message');
  await until('only the InvalidJson left', async () => (await p.pipeline.queueDepth('dlq')).visible === 1);
  // On a failure, what the consumers said of each key shows how it was sent.
  const sends = async (to: string, key: string) => {
    const n = addressedTo(await p.emails(), to).length;
    return n === (key === ka ? 1 : 0) ? { key, n } : { key, n, consumersSaid: linesAbout(p, key) };
  };
  expect(await sends(ta, ka)).toEqual({ key: ka, n: 1 });
  expect(await sends(tb, kb)).toEqual({ key: kb, n: 0 });
  expect(cli(['dlq', 'purge', '--yes'])).toMatchObject({ status: 0 });
});

test('resend: a sent key is released, recorded in its timeline, and sent again once republished; a dead-lettered one is redriven', async () => {
  const key = `resend-${p.name}`;
  const to = p.address('resend');
  await p.publish({ to, subject: 'Once', text: 'Then again.' }, { key });
  await until('sent and recorded', () => /: (sent|delivered) /.test(cli(['status', key]).stdout), 30_000);
  // The ledger can record SES's Send before the send function has written its claim COMPLETED (a
  // claim in progress is never released): its `sent` decision comes after that write.
  await until('the claim completed', () => p.decisions('sent').some((d) => d.dedupeKey === key));

  const dry = cli(['resend', key, '--reason', 'template fixed', '--dry-run']);
  expect(dry).toMatchObject({ status: 0 });
  expect(dry.stdout).toContain(`Would release ${key} on the local pipeline`);
  expect(dry.stdout).toContain('(its completed send record deleted)');
  expect(cli(['status', key]).stdout).not.toContain('released for a resend');

  const resend = cli(['resend', key, '--reason', 'template fixed', '--yes']);
  expect(resend).toMatchObject({ status: 0 });
  expect(resend.stdout).toContain(`Released ${key} on the local pipeline`);
  expect(resend.stdout).toContain(`by local:${os.userInfo().username}: template fixed`);
  expect(resend.stdout).toContain(`email-pipeline publish --idempotency-key "${key}"`);
  const released = cli(['status', key]);
  expect(released.stdout).toContain('released for a resend');
  expect(released.stdout).toMatch(/Resend +by local:\S+: template fixed/);

  await p.publish({ to, subject: 'Once', text: 'Then again.' }, { key });
  await until('the second email', async () => addressedTo(await p.emails(), to).length === 2, 30_000);
  await until('the status of the new send', () => /: (sent|delivered) /.test(cli(['status', key]).stdout), 30_000);
  const after = cli(['status', '--json', key]);
  const report = JSON.parse(after.stdout) as { events: { type: string }[] };
  expect(report.events.map((e) => e.type)).toEqual(expect.arrayContaining(['Send', 'Resend']));
  // A third publish is a duplicate again: the resend was one send, not an open door.
  await p.publish({ to, subject: 'Once', text: 'Then again.' }, { key });
  await until(
    'the duplicate suppressed',
    () => p.decisions('duplicate').some((d) => JSON.stringify(d).includes(key)),
    30_000,
  );
  expect(addressedTo(await p.emails(), to)).toHaveLength(2);

  // A key in the DLQ: resend redrives it.
  await pause();
  const dead = `resend-dead-${p.name}`;
  const deadTo = p.address('resend-dead');
  await deadLetterOf(dead, deadTo);
  expect(cli(['resume'])).toMatchObject({ status: 0 });
  const redriven = cli(['resend', dead, '--reason', 'SES quota raised', '--yes', '--json']);
  expect(redriven).toMatchObject({ status: 0 });
  expect(JSON.parse(redriven.stdout)).toMatchObject({
    key: dead,
    released: 'none',
    redriven: 1,
    reason: 'SES quota raised',
  });
  await until('the redriven email', async () => addressedTo(await p.emails(), deadTo).length > 0, 30_000);
});

test('deliveries, pause, resume and resend --help exit 0 with their usage', () => {
  for (const name of ['deliveries', 'pause', 'resume', 'resend']) {
    const run = cli([name, '--help']);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toContain(`Usage: email-pipeline ${name}`);
  }
});
