/**
 * The soak: a long run of `npm start` as a user starts it, measured from outside. It starts
 * `npm start` in a checkout (`--tree`, default this one) on ports of its own, publishes
 * `--emails` emails with an `idempotency-key` each plus `--duplicates` of them published again,
 * waits until every email is SENT (one line each on npm start's output), and samples the resident
 * memory and CPU time of every process npm start started, once a second (/proc, Linux only). Another tree's
 * code can be measured by the same driver, so two trees compare in one sitting (BENCHMARKS.md,
 * "The soak").
 *
 *   node --import tsx tools/dev/bench/soak.ts [--tree DIR] [--emails N] [--duplicates N] [--out FILE]
 *     [--node PATH] [--base-port N] [--count-requests]
 *
 * `--count-requests` preloads soak-request-counter.cjs into every process npm start runs and
 * reports their DynamoDB requests by process, operation and table (the counting costs CPU of its
 * own: time a run without it).
 *
 * The pipeline's settings are the tree's cdk.json; SES_MAX_SEND_RATE, LOCAL_CONSUMERS and
 * NODE_OPTIONS pass through from this process's environment.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PublishBatchCommand, SNSClient } from '@aws-sdk/client-sns';
import { chunk } from './in-process';

interface Options {
  readonly tree: string;
  readonly emails: number;
  readonly duplicates: number;
  readonly out?: string;
  readonly basePort: number;
  readonly node?: string;
  readonly countRequests: boolean;
}

function readOptions(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const emails = Number(value('--emails') ?? 20_000);
  const duplicates = Number(value('--duplicates') ?? emails / 2);
  if (!Number.isInteger(emails) || emails < 1) throw new Error('--emails: a whole number above 0');
  if (!Number.isInteger(duplicates) || duplicates < 0 || duplicates > emails)
    throw new Error('--duplicates: a whole number from 0 to --emails');
  const out = value('--out');
  const node = value('--node');
  return {
    tree: path.resolve(value('--tree') ?? path.join(__dirname, '..', '..', '..')),
    emails,
    duplicates,
    basePort: Number(value('--base-port') ?? 18_600),
    countRequests: argv.includes('--count-requests'),
    ...(out ? { out: path.resolve(out) } : {}),
    ...(node ? { node } : {}),
  };
}

/** Every process below `root`, with its command line. */
function descendants(root: number): Map<number, string> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone between readdir and read
    }
  }
  const found = new Map<number, string>();
  const walk = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      try {
        found.set(child, readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim());
      } catch {
        continue;
      }
      walk(child);
    }
  };
  walk(root);
  return found;
}

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = 100;

function rssMb(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** What a process is, from its command line: consumers by the queue they read (npm start's own names). */
function role(cmdline: string): string {
  if (/consumer/.test(cmdline) && /enable-source-maps/.test(cmdline)) return 'consumer';
  if (/DynamoDBLocal|java/.test(cmdline)) return 'dynamodb-local';
  if (/node-service|fauxqs|ses-v2/.test(cmdline)) return 'emulator';
  if (/bin\/local\.ts/.test(cmdline)) return 'npm-start';
  return 'other';
}

interface ProcessMemory {
  readonly pid: number;
  readonly role: string;
  readonly cmdline: string;
  firstMb: number;
  lastMb: number;
  peakMb: number;
  cpuSeconds: number;
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const state = mkdtempSync(path.join(tmpdir(), 'soak-'));
  const ports = {
    DYNAMODB_PORT: String(options.basePort),
    SQS_PORT: String(options.basePort + 1),
    SES_PORT: String(options.basePort + 2),
    STATUS_PORT: String(options.basePort + 3),
  };
  // `--node PATH`: npm start's script run by that node instead (its consumers run on it too).
  const [command, args] = options.node ? [options.node, ['--import', 'tsx', 'bin/local.ts']] : ['npm', ['start']];
  const counted = path.join(state, 'requests');
  const counting = options.countRequests ? requestCounting(state, counted) : {};
  const child = spawn(command, args, {
    cwd: options.tree,
    env: { ...process.env, ...ports, LOCAL_STATE_DIR: state, ...counting },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const counts = { sent: 0, duplicate: 0, deadLettered: 0, retry: 0 };
  let pending = '';
  const lines: string[] = [];
  child.stdout.on('data', (data: Buffer) => {
    pending += data.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      if (/\sSENT\s/.test(line)) counts.sent += 1;
      else if (/DUPLICATE SUPPRESSED/.test(line)) counts.duplicate += 1;
      else if (/DEAD-LETTERED/.test(line)) counts.deadLettered += 1;
      else if (/\sRETRY\s/.test(line)) counts.retry += 1;
      else if (lines.length < 200) lines.push(line);
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
  const started = performance.now();
  while (!existsSync(outputsFile)) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${lines.join('\n')}`);
    if (performance.now() - started > 300_000) throw new Error('npm start did not write outputs.json in 300 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as { TopicArn: string; SnsEndpoint?: string };
  const sns = new SNSClient({
    endpoint: outputs.SnsEndpoint ?? `http://127.0.0.1:${ports.SQS_PORT}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

  const memory = new Map<number, ProcessMemory>();
  const sample = (): void => {
    for (const [pid, cmdline] of descendants(child.pid!)) {
      const mb = rssMb(pid);
      if (mb === undefined) continue;
      const cpu = cpuSeconds(pid) ?? 0;
      const seen = memory.get(pid);
      if (seen) {
        seen.lastMb = mb;
        seen.peakMb = Math.max(seen.peakMb, mb);
        seen.cpuSeconds = cpu;
      } else
        memory.set(pid, { pid, role: role(cmdline), cmdline, firstMb: mb, lastMb: mb, peakMb: mb, cpuSeconds: cpu });
    }
  };
  sample();
  const timeline: { seconds: number; sent: number; consumerRssMb: number[] }[] = [];
  const t0 = performance.now();
  const sampler = setInterval(() => {
    sample();
    timeline.push({
      seconds: Math.round((performance.now() - t0) / 1000),
      sent: counts.sent,
      consumerRssMb: [...memory.values()].filter((p) => p.role === 'consumer').map((p) => Math.round(p.lastMb)),
    });
  }, 1000);

  // Publish: email i (0..emails-1), then the first `duplicates` again, same key and content.
  const run = Date.now().toString(36);
  const order = [
    ...Array.from({ length: options.emails }, (_, i) => i),
    ...Array.from({ length: options.duplicates }, (_, i) => i),
  ];
  for (const group of chunk(chunk(order, 10), 4)) {
    await Promise.all(
      group.map(async (batch, b) => {
        const result = await sns.send(
          new PublishBatchCommand({
            TopicArn: outputs.TopicArn,
            PublishBatchRequestEntries: batch.map((i, n) => ({
              Id: `${b}-${n}`,
              Message: JSON.stringify({
                to: `user${i}@soak.example.com`,
                subject: `Order ${i} confirmed`,
                text: `Thank you for order ${i}.`,
              }),
              MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: `soak-${run}-${i}` } },
            })),
          }),
        );
        if (result.Failed?.length) throw new Error(`${result.Failed.length} publish(es) failed`);
      }),
    );
  }
  const publishSeconds = (performance.now() - t0) / 1000;
  while (counts.sent < options.emails) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
    if (performance.now() - t0 > 1_800_000) throw new Error(`only ${counts.sent} sent in 1800 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const totalSeconds = (performance.now() - t0) / 1000;
  // Let the duplicates still queued be suppressed, then a last sample.
  const settleUntil = performance.now() + 30_000;
  while (counts.duplicate < options.duplicates && performance.now() < settleUntil)
    await new Promise((resolve) => setTimeout(resolve, 200));
  clearInterval(sampler);
  sample();
  // The counters write once a second: let the last second's be written.
  if (options.countRequests) await new Promise((resolve) => setTimeout(resolve, 1500));
  stop();

  const round = (n: number): number => Math.round(n * 10) / 10;
  const result = {
    tree: options.tree,
    commit: gitHead(options.tree),
    nodeOfNpmStart: [...memory.values()].find((p) => p.role === 'npm-start')?.cmdline.split(' ')[0],
    emails: options.emails,
    publishes: options.emails + options.duplicates,
    env: {
      SES_MAX_SEND_RATE: process.env.SES_MAX_SEND_RATE ?? '(default)',
      LOCAL_CONSUMERS: process.env.LOCAL_CONSUMERS ?? '(default)',
      NODE_OPTIONS: process.env.NODE_OPTIONS ?? '',
    },
    publishSeconds: round(publishSeconds),
    totalSeconds: round(totalSeconds),
    emailsPerSecond: round(options.emails / totalSeconds),
    counts: { ...counts },
    processes: [...memory.values()]
      .filter((p) => p.role !== 'other')
      .map((p) => ({
        role: p.role,
        firstMb: round(p.firstMb),
        peakMb: round(p.peakMb),
        lastMb: round(p.lastMb),
        cpuSeconds: round(p.cpuSeconds),
        cmd: p.cmdline.slice(0, 160),
      })),
    timeline: timeline.filter((_, i) => i % 10 === 0),
    ...(options.countRequests ? { dynamodbRequests: requestCounts(counted) } : {}),
  };
  console.log(JSON.stringify({ ...result, timeline: undefined }, null, 2));
  if (options.out) writeFileSync(options.out, JSON.stringify(result, null, 2));
  rmSync(state, { recursive: true, force: true });
}

/**
 * The environment that preloads the request counter into npm start and everything it runs: the
 * consumers keep only NODE_OPTIONS of it (and PATH, HOME, TMPDIR), so the counter's folder is
 * written into a preload file of its own.
 */
function requestCounting(state: string, folder: string): Record<string, string> {
  mkdirSync(folder, { recursive: true });
  const preload = path.join(state, 'count-requests.cjs');
  const counter = path.join(__dirname, 'soak-request-counter.cjs');
  writeFileSync(
    preload,
    `process.env.SOAK_COUNT_DIR = ${JSON.stringify(folder)};\nrequire(${JSON.stringify(counter)});\n`,
  );
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() };
}

/** Requests by process (consumer name, or script) and operation, summed over processes of one name. */
function requestCounts(folder: string): Record<string, Record<string, number>> {
  const byWho: Record<string, Record<string, number>> = {};
  for (const file of readdirSync(folder)) {
    const { who, counts } = JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as {
      who: string;
      counts: Record<string, number>;
    };
    const mine = (byWho[who] ??= {});
    for (const [name, n] of Object.entries(counts)) mine[name] = (mine[name] ?? 0) + n;
  }
  return byWho;
}

/** The commit checked out in `tree`, and whether its files differ from it (a worktree's `.git` is a file). */
function gitHead(tree: string): string | undefined {
  const git = (args: string[]) => execFileSync('git', ['-C', tree, ...args], { encoding: 'utf8' }).trim();
  try {
    return `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain']) ? ' (modified)' : ''}`;
  } catch {
    return undefined;
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
