/**
 * A fair share between teams, measured from outside `npm start` as issue 34 measures it: two teams
 * (`billing`: two senders, share 50; `security`: share 50, high priority, an SES tenant), a burst of
 * `--burst` billing emails by PublishBatch, and, `--after` seconds into it, `--late` security emails
 * published one by one on security's own topic (`--lane normal`, the default) or its high-priority
 * topic (`--lane high`). It reports how long each security email took from its publish to its SENT
 * line on npm start's output, and how long the burst took. Another tree's code is measured by the
 * same driver (`--tree`), so two trees compare in one sitting (BENCHMARKS.md, "Teams: a fair share").
 *
 *   node --import tsx tools/dev/bench/team-share.ts [--tree DIR] [--burst 300] [--late 10]
 *     [--after 2] [--lane normal|high] [--shares B,S] [--both N [--high M]] [--base-port N] [--out FILE]
 *
 * `--shares B,S` gives billing and security those rateSharePercents instead of 50 and 50. `--both N`
 * measures the split instead: N emails of each team published at once, and each team's part of the
 * emails sent while both still had mail waiting (until the first team's last send), from the publish and
 * from 2 s after both teams were sending (each had its first email sent). `--high M` adds M security
 * emails on its high-priority topic, published with the others (they count as security's).
 *
 * The teams come in CDK_CONTEXT_JSON (npm start reads it over cdk.json's context, as the CDK CLI
 * passes context to an app); every other setting is the tree's cdk.json. SES_MAX_SEND_RATE and
 * LOCAL_CONSUMERS pass through from this process's environment.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { chunk } from './in-process';

/** The issue's two teams. */
export const ISSUE_TEAMS = {
  billing: { senders: ['billing@example.com', 'invoices@example.com'], rateSharePercent: 50 },
  security: { senders: ['security@example.com'], highPriority: true, rateSharePercent: 50, sesTenant: true },
};

/** How long after both teams were sending the steady window starts: a borrow's reach and a lease's horizon. */
const STEADY_AFTER_MS = 2000;

interface Options {
  readonly tree: string;
  readonly burst: number;
  readonly late: number;
  readonly afterSeconds: number;
  readonly lane: 'normal' | 'high';
  readonly basePort: number;
  readonly out?: string;
  readonly shares: readonly [number, number];
  readonly both: number;
  readonly high: number;
}

function readOptions(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const whole = (name: string, fallback: number): number => {
    const n = Number(value(name) ?? fallback);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: a whole number of at least 0`);
    return n;
  };
  const lane = value('--lane') ?? 'normal';
  if (lane !== 'normal' && lane !== 'high') throw new Error('--lane: normal or high');
  const out = value('--out');
  const shares = (value('--shares') ?? '50,50').split(',').map(Number);
  if (shares.length !== 2 || !shares.every((n) => Number.isInteger(n) && n >= 1 && n <= 100)) {
    throw new Error('--shares: two whole percents, billing,security');
  }
  return {
    shares: [shares[0]!, shares[1]!],
    both: whole('--both', 0),
    high: whole('--high', 0),
    tree: path.resolve(value('--tree') ?? path.join(__dirname, '..', '..', '..')),
    burst: whole('--burst', 300),
    late: whole('--late', 10),
    afterSeconds: whole('--after', 2),
    lane,
    basePort: whole('--base-port', 18_700),
    ...(out ? { out: path.resolve(out) } : {}),
  };
}

/** The key of a SENT line (`... SENT  key=<key> ...`), or undefined for any other line. */
export function sentKey(line: string): string | undefined {
  if (!/\sSENT\s/.test(line)) return undefined;
  return /key=(\S+)/.exec(line)?.[1];
}

/** The middle value of `values` (the mean of the two middle ones for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const state = mkdtempSync(path.join(tmpdir(), 'team-share-'));
  const ports = {
    DYNAMODB_PORT: String(options.basePort),
    SQS_PORT: String(options.basePort + 1),
    SES_PORT: String(options.basePort + 2),
    STATUS_PORT: String(options.basePort + 3),
  };
  const child = spawn('npm', ['start'], {
    cwd: options.tree,
    env: {
      ...process.env,
      ...ports,
      LOCAL_STATE_DIR: state,
      CDK_CONTEXT_JSON: JSON.stringify({
        'emailPipeline:teams': {
          billing: { ...ISSUE_TEAMS.billing, rateSharePercent: options.shares[0] },
          security: { ...ISSUE_TEAMS.security, rateSharePercent: options.shares[1] },
        },
      }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const sentAt = new Map<string, number>();
  const lines: string[] = [];
  let pending = '';
  child.stdout.on('data', (data: Buffer) => {
    pending += data.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      const key = sentKey(line);
      if (key !== undefined && !sentAt.has(key)) sentAt.set(key, performance.now());
      else if (key === undefined && lines.length < 200) lines.push(line);
    }
  });
  child.stderr.on('data', (data: Buffer) => process.stderr.write(data));
  const stop = (): void => {
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.on('exit', stop);

  const outputsFile = path.join(state, 'outputs.json');
  const waitedFrom = performance.now();
  while (!existsSync(outputsFile)) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${lines.join('\n')}`);
    if (performance.now() - waitedFrom > 300_000) throw new Error('npm start did not write outputs.json in 300 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as {
    SnsEndpoint?: string;
    Teams?: Record<string, { TopicArn: string; HighPriorityTopicArn?: string }>;
  };
  const billing = outputs.Teams?.billing?.TopicArn;
  const security =
    options.lane === 'high' ? outputs.Teams?.security?.HighPriorityTopicArn : outputs.Teams?.security?.TopicArn;
  if (!billing || !security) throw new Error(`outputs.json names no ${options.lane} topic of the teams`);
  const sns = new SNSClient({
    endpoint: outputs.SnsEndpoint ?? `http://127.0.0.1:${ports.SQS_PORT}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

  const run = Date.now().toString(36);
  const message = (i: number, who: string) =>
    JSON.stringify({ to: `${who}${i}@share.example.com`, subject: `${who} ${i}`, text: `Message ${i}.` });
  const publishBurst = async (topicArn: string, who: string, prefix: string, count: number): Promise<void> => {
    for (const group of chunk(chunk([...Array(count).keys()], 10), 4)) {
      await Promise.all(
        group.map((batch, b) =>
          sns.send(
            new PublishBatchCommand({
              TopicArn: topicArn,
              PublishBatchRequestEntries: batch.map((i, n) => ({
                Id: `${b}-${n}`,
                Message: message(i, who),
                MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: `${prefix}-${run}-${i}` } },
              })),
            }),
          ),
        ),
      );
    }
  };
  const waitForSends = async (keys: readonly string[], from: number): Promise<void> => {
    while (!keys.every((key) => sentAt.has(key))) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
      if (performance.now() - from > 600_000) throw new Error('not every email was sent in 600 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const t0 = performance.now();
  if (options.both > 0) {
    const securityHigh = outputs.Teams!.security!.HighPriorityTopicArn;
    if (options.high > 0 && !securityHigh) throw new Error('--high: security has no high-priority topic');
    await Promise.all([
      publishBurst(billing, 'billing', 'b', options.both),
      publishBurst(outputs.Teams!.security!.TopicArn, 'security', 's', options.both),
      ...(options.high > 0 ? [publishBurst(securityHigh!, 'security', 'h', options.high)] : []),
    ]);
    const keysOf = (team: string, prefix: string, count = options.both) =>
      [...Array(count).keys()].map((i) => `${team}#${prefix}-${run}-${i}`);
    const teams = {
      billing: keysOf('billing', 'b'),
      security: [...keysOf('security', 's'), ...keysOf('security', 'h', options.high)],
    };
    await waitForSends([...teams.billing, ...teams.security], t0);
    const lastOf = (keys: readonly string[]) => Math.max(...keys.map((key) => sentAt.get(key)!));
    const window = Math.min(lastOf(teams.billing), lastOf(teams.security));
    const within = (keys: readonly string[]) => keys.filter((key) => sentAt.get(key)! <= window).length;
    const sent = { billing: within(teams.billing), security: within(teams.security) };
    const total = sent.billing + sent.security;
    // The same, from STEADY_AFTER_MS after both teams were sending (each had its first email sent):
    // what the lanes give once both teams' consumers run, without the start-up of either (a team
    // that starts first borrows the other's lane, up to BORROW_PERIOD_MS ahead, before it leases).
    const firstOf = (keys: readonly string[]) => Math.min(...keys.map((key) => sentAt.get(key)!));
    const from = Math.max(firstOf(teams.billing), firstOf(teams.security)) + STEADY_AFTER_MS;
    const between = (keys: readonly string[]) =>
      keys.filter((key) => sentAt.get(key)! >= from && sentAt.get(key)! <= window).length;
    const steady = { billing: between(teams.billing), security: between(teams.security) };
    const split = {
      tree: options.tree,
      shares: { billing: options.shares[0], security: options.shares[1] },
      each: options.both,
      securityHigh: options.high,
      whileBothWaited: {
        seconds: (window - t0) / 1000,
        billing: sent.billing,
        security: sent.security,
        billingPart: sent.billing / total,
        securityPart: sent.security / total,
      },
      whileBothSentSteady: {
        afterMs: STEADY_AFTER_MS,
        seconds: (window - from) / 1000,
        billing: steady.billing,
        security: steady.security,
        billingPart: steady.billing / (steady.billing + steady.security),
        ratePerSecond: {
          billing: steady.billing / ((window - from) / 1000),
          security: steady.security / ((window - from) / 1000),
        },
      },
      allSeconds: (Math.max(lastOf(teams.billing), lastOf(teams.security)) - t0) / 1000,
      at: new Date().toISOString(),
    };
    await finish(split);
    return;
  }
  const burst = publishBurst(billing, 'billing', 'b', options.burst);
  await new Promise((resolve) => setTimeout(resolve, options.afterSeconds * 1000));
  const publishedAt = new Map<string, number>();
  for (let i = 0; i < options.late; i += 1) {
    const key = `s-${run}-${i}`;
    await sns.send(
      new PublishCommand({
        TopicArn: security,
        Message: message(i, 'security'),
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } },
      }),
    );
    publishedAt.set(`security#${key}`, performance.now());
  }
  await burst;
  const billingKeys = [...Array(options.burst).keys()].map((i) => `billing#b-${run}-${i}`);
  await waitForSends([...billingKeys, ...publishedAt.keys()], t0);
  const latencies = [...publishedAt].map(([key, at]) => (sentAt.get(key)! - at) / 1000);
  const burstSeconds = (Math.max(...billingKeys.map((key) => sentAt.get(key)!)) - t0) / 1000;
  const result = {
    tree: options.tree,
    lane: options.lane,
    burst: options.burst,
    late: options.late,
    lateSeconds: { max: Math.max(...latencies), median: median(latencies), min: Math.min(...latencies) },
    burstSeconds,
    at: new Date().toISOString(),
  };
  await finish(result);

  async function finish(measured: object): Promise<void> {
    console.log(JSON.stringify(measured, null, 2));
    if (options.out) writeFileSync(options.out, `${JSON.stringify(measured, null, 2)}\n`);
    stop();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    rmSync(state, { recursive: true, force: true });
    process.exit(0);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
