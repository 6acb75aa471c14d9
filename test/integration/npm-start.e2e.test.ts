/**
 * `npm start` itself (bin/local.ts), as a newcomer runs it: on its own ports
 * and state folder so it can run beside a developer's pipeline. It must print
 * its endpoints, write outputs.json, send one email per idempotency key,
 * refuse a second start, and leave nothing behind when stopped.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { emulatorConfig } from '../../tools/dev/local/emulator-config';
import { freePort, launch, type ManagedProcess } from '../../tools/dev/local/processes';
import type { LocalOutputs } from '../../tools/dev/local/state';
import type { DeliveryReport } from '../../lambdas/kernel/ledger/schema';
import { npmScript } from './npm-script';
import { mailTo, until } from './support';

// Exactly what `npm start` runs (package.json), so the test meets its signal handling too.
const START = npmScript('start');

let proc: ManagedProcess | undefined;
afterAll(() => proc?.stop());

function portIsClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

test('npm start serves the pipeline, dedupes a repeated key, refuses a second start and stops cleanly', async () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'email-pipeline-state-'));
  const ports = {
    DYNAMODB_PORT: await freePort(),
    SQS_PORT: await freePort(),
    SES_PORT: await freePort(),
    STATUS_PORT: await freePort(),
  };
  const env = {
    ...process.env,
    LOCAL_STATE_DIR: stateDir,
    LOCAL_CONSUMERS: '1',
    DYNAMODB_PORT: String(ports.DYNAMODB_PORT),
    SQS_PORT: String(ports.SQS_PORT),
    SES_PORT: String(ports.SES_PORT),
    STATUS_PORT: String(ports.STATUS_PORT),
  };
  const lines: string[] = [];
  proc = await launch({
    name: 'npm start',
    command: START.command,
    args: START.args,
    cwd: REPO_ROOT,
    env,
    onOutput: (line) => lines.push(line),
  });
  // Typically a few seconds; the bound only says it starts at all, also on a busy two-core machine
  // (how long it took is in the banner, not asserted: speed is the benchmark's business).
  await until('the ready banner', () => lines.some((l) => l.includes('Local email pipeline ready')), 90_000);
  expect(lines.join('\n')).toContain(`--endpoint-url http://127.0.0.1:${ports.SQS_PORT}`);
  // The commands it suggests reach this pipeline, not the one of the default state folder.
  expect(lines.join('\n')).toContain(
    `or: LOCAL_STATE_DIR=${stateDir} npm run -s publish-email -- --to you@example.com`,
  );

  const outputs = JSON.parse(readFileSync(path.join(stateDir, 'outputs.json'), 'utf8')) as LocalOutputs;
  expect(Object.keys(outputs).sort()).toEqual(
    [
      'AttachmentsBucketName',
      'S3Endpoint',
      'ConfigurationSetName',
      'DeadLetterQueueUrl',
      'DeliveryStatusTopicArn',
      'DynamoDbEndpoint',
      'LedgerTableName',
      'MailboxUrl',
      'QueueUrl',
      'SesEndpoint',
      'SnsEndpoint',
      'SqsEndpoint',
      'TableName',
      'TopicArn',
      'HighPriorityTopicArn',
      'IdempotencyKeyPrefix',
      'StatusUrl',
      'CancelUrl',
      'PauseFile',
      'LedgerBufferQueueUrl',
      'LedgerDeadLetterQueueUrl',
      'LedgerRedriveFile',
    ].sort(),
  );
  // email-pipeline pause's switch lives in the state folder, and so does dlq redrive --queue ledger's.
  expect(outputs.PauseFile).toBe(path.join(stateDir, 'send-paused'));
  expect(outputs.LedgerRedriveFile).toBe(path.join(stateDir, 'ledger-dlq-redrive'));

  // Contract v1.2: the attachments bucket is on fauxqs's S3, the SNS/SQS endpoint.
  expect(outputs.S3Endpoint).toBe(outputs.SqsEndpoint);

  // Publish the same idempotency key twice: one email, and the second is logged as suppressed.
  const sns = new SNSClient(emulatorConfig(outputs.SnsEndpoint));
  const to = `newcomer-${Date.now()}@example.com`;
  const publish = () =>
    sns.send(
      new PublishCommand({
        TopicArn: outputs.TopicArn,
        Message: JSON.stringify({ to, subject: 'Hello', text: 'Sent exactly once.' }),
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'order-42' } },
      }),
    );
  await publish();
  const mine = () => mailTo(outputs.SesEndpoint, to);
  // Typically under 2 s; the bound is loose so that a busy machine does not fail the run.
  await until('the email in the SES store', async () => (await mine()).length === 1, 30_000);
  await publish();
  await until('the repeat suppressed', () =>
    lines.some((l) => l.includes('DUPLICATE SUPPRESSED') && l.includes('order-42')),
  );
  expect(await mine()).toHaveLength(1);
  sns.destroy();

  // The status endpoint it printed knows the key, and says unknown for one never published.
  expect(outputs.StatusUrl).toBe(`http://127.0.0.1:${ports.STATUS_PORT}/deliveries/`);
  expect(lines.join('\n')).toContain(`http://127.0.0.1:${ports.STATUS_PORT}/deliveries/{key}`);
  const status = async (key: string) => (await (await fetch(`${outputs.StatusUrl}${key}`)).json()) as DeliveryReport;
  expect(['sent', 'delivered']).toContain((await status('order-42')).status);
  expect(await status('never-published')).toEqual({ key: 'never-published', status: 'unknown', events: [] });
  // Cancels have a URL of their own: the status URL refuses a DELETE, the cancel URL takes it.
  expect(outputs.CancelUrl).toBe(`http://127.0.0.1:${ports.STATUS_PORT}/cancel/deliveries/`);
  expect((await fetch(`${outputs.StatusUrl}never-published`, { method: 'DELETE' })).status).toBe(405);
  const cancelled = await fetch(`${outputs.CancelUrl}never-published`, { method: 'DELETE' });
  expect({ status: cancelled.status, outcome: ((await cancelled.json()) as { outcome: string }).outcome }).toEqual({
    status: 200,
    outcome: 'cancelled',
  });

  // npm run -s verify proves this pipeline as verify proves a deployed one: every check holds
  // (CloudWatch's are skipped locally), the canary delivered with its Send and Delivery events trusted.
  const VERIFY = npmScript('verify');
  const verified = spawnSync(VERIFY.command, VERIFY.args, { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
  expect({ status: verified.status, stderr: verified.stderr }).toMatchObject({ status: 0 });
  expect(verified.stdout).toMatch(/^ok +sending is on/m);
  expect(verified.stdout).toMatch(/^ok +dead-letter queues are empty/m);
  expect(verified.stdout).toMatch(/^ok +a canary to SES’s mailbox simulator is delivered.*events: .*Send.*Delivery/m);
  expect(verified.stdout).toMatch(/^skip +reputation metrics .*no CloudWatch/m);

  // A second start while this one runs says so and exits non-zero.
  const second = spawnSync(START.command, START.args, { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 30_000 });
  expect(second.status).toBe(1);
  expect(second.stderr).toContain('already running');

  // Stop it: everything goes, ports and state included.
  await proc.stop({ graceMs: 60_000 });
  expect(proc.exitInfo()).toBeDefined();
  // One process (node --import tsx): it exits only after its own shutdown has printed this.
  expect(lines).toContain('Stopped.');
  await until(
    'every port closed',
    async () => (await Promise.all(Object.values(ports).map(portIsClosed))).every(Boolean),
    30_000,
  );
  expect(existsSync(path.join(stateDir, 'outputs.json'))).toBe(false);
  expect(existsSync(path.join(stateDir, 'pipeline.pid'))).toBe(false);
  rmSync(stateDir, { recursive: true, force: true });
}, 180_000);

test('a closed terminal (SIGHUP) stops npm start as Ctrl-C does: no PID file or outputs.json left', async () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'email-pipeline-hup-'));
  const lines: string[] = [];
  const hup = await launch({
    name: 'npm start (SIGHUP)',
    command: START.command,
    args: START.args,
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      LOCAL_STATE_DIR: stateDir,
      LOCAL_CONSUMERS: '1',
      DYNAMODB_PORT: String(await freePort()),
      SQS_PORT: String(await freePort()),
      SES_PORT: String(await freePort()),
      STATUS_PORT: String(await freePort()),
    },
    onOutput: (line) => lines.push(line),
  });
  try {
    await until('the ready banner', () => lines.some((l) => l.includes('Local email pipeline ready')), 90_000);
    expect(existsSync(path.join(stateDir, 'pipeline.pid'))).toBe(true);
    process.kill(hup.pid, 'SIGHUP');
    await hup.exited;
    expect(lines).toContain('Stopped.');
    expect(existsSync(path.join(stateDir, 'pipeline.pid'))).toBe(false);
    expect(existsSync(path.join(stateDir, 'outputs.json'))).toBe(false);
  } finally {
    await hup.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}, 180_000);

test('npm start -- --help prints the environment it reads (exit 0); an argument is a usage error (exit 2)', () => {
  const run = (...extra: string[]) =>
    spawnSync(START.command, [...START.args, ...extra], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  const help = run('--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^Usage: npm start/);
  expect(help.stdout).toContain('DYNAMODB_PORT (8000), SQS_PORT (4566), SES_PORT (8005), STATUS_PORT (8010)');
  const wrong = run('--port', '9000');
  expect(wrong.status).toBe(2);
  expect(wrong.stderr).toContain('npm start: unexpected argument "--port"');
  expect(wrong.stderr).not.toContain('LOCAL_RAW_LOGS');
});

describe('npm start refuses what it cannot run, and says why', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  function start(extra: Record<string, string>): { status: number | null; stderr: string; stateDir: string } {
    const parent = mkdtempSync(path.join(tmpdir(), 'email-pipeline-refused-'));
    made.push(parent);
    const stateDir = path.join(parent, 'state');
    const result = spawnSync(START.command, START.args, {
      cwd: REPO_ROOT,
      env: { ...process.env, LOCAL_STATE_DIR: stateDir, ...extra },
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: result.status, stderr: result.stderr, stateDir };
  }

  test.each([
    [{ DYNAMODB_PORT: 'abc' }, 'DYNAMODB_PORT=abc is not a port'],
    [{ LOCAL_CONSUMERS: '0' }, 'LOCAL_CONSUMERS=0: must be a whole number from 1 to 10'],
    [{ SES_MAX_SEND_RATE: '-1' }, 'SES_MAX_SEND_RATE=-1'],
    [{ STATUS_PORT: '70000' }, 'STATUS_PORT=70000 is not a port'],
  ])('a bad setting (%o) is a usage error: exit 2, named, no stack trace, nothing left behind', (env, named) => {
    const { status, stderr, stateDir } = start(env);
    expect(status).toBe(2);
    expect(stderr).toContain(`npm start: ${named}`);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(stateDir)).toBe(false);
  });

  test('a port in use fails the start: exit 1, the port named with what to do, no PID or outputs left', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      const { status, stderr, stateDir } = start({
        SQS_PORT: String(taken),
        DYNAMODB_PORT: String(await freePort()),
        SES_PORT: String(await freePort()),
        STATUS_PORT: String(await freePort()),
      });
      expect(status).toBe(1);
      expect(stderr).toContain(`npm start: port ${taken} (SQS_PORT) is in use`);
      expect(stderr).toContain('Stop what holds it, or choose other ports');
      // The emulator's own words (a stack trace) are left out.
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(path.join(stateDir, 'pipeline.pid'))).toBe(false);
      expect(existsSync(path.join(stateDir, 'outputs.json'))).toBe(false);
    } finally {
      holder.close();
    }
  }, 150_000);

  test('DynamoDB Local (Java) on a port in use is named the same way, without its stack trace', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      const { status, stderr, stateDir } = start({
        DYNAMODB_PORT: String(taken),
        SQS_PORT: String(await freePort()),
        SES_PORT: String(await freePort()),
        STATUS_PORT: String(await freePort()),
      });
      expect(status).toBe(1);
      expect(stderr).toContain(`npm start: port ${taken} (DYNAMODB_PORT) is in use`);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(path.join(stateDir, 'pipeline.pid'))).toBe(false);
    } finally {
      holder.close();
    }
  }, 150_000);
});
