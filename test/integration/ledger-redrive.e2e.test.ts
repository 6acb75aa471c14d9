/**
 * `email-pipeline dlq redrive --queue ledger` on the local pipeline, as an operator runs it (a real
 * CLI process): real SES events of a real send are in the ledger DLQ (moved there as the buffer's
 * redrive policy moves events the ledger function failed on); the redrive lets the ledger consumer
 * read its DLQ (the flag file, the local stand-in of the disabled mapping) until it is empty, never
 * sending to the buffer; the key's status then shows the events, and the flag is off again. A
 * poison event stops it after --stall seconds without progress, said with how many remain. A
 * redrive killed (SIGKILL) leaves the flag on: verify reports it with the fix, and --stop turns it off.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { drainQueue } from '../../tools/dev/local/queues';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { cliArgv, cliEnv, runCli, startTestPipeline, until, writeCliOutputs, type TestPipeline } from './support';

let p: TestPipeline;
let stateDir: string;
let flagFile: string;

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'ledger-redrive-state-'));
  flagFile = path.join(stateDir, 'ledger-dlq-redrive');
  // No ledger consumer yet: the send's SES events wait in the buffer.
  p = await startTestPipeline({ ledgerRedriveFile: flagFile });
  writeCliOutputs(stateDir, p, { LedgerRedriveFile: flagFile });
});
afterAll(async () => {
  await p?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const cli = (args: readonly string[]) => runCli(stateDir, args, { timeoutMs: 120_000 });

async function count(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await p.pipeline.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) + Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

test('a real SES event in the ledger DLQ is recorded by the redrive; the DLQ is empty and the flag off after', async () => {
  const { ledger } = p.pipeline.resources;
  const key = `ledger-redrive-${p.name}`;
  await p.publish({ to: p.address('redriven'), subject: 'Hi', text: 'Once.' }, { key });
  // Send and Delivery, as SES publishes them: moved to the ledger DLQ as the buffer's redrive policy would.
  await until('both SES events in the buffer', async () => (await count(ledger.bufferQueueUrl)) === 2, 30_000);
  const events = await drainQueue(p.pipeline.sqs, ledger.bufferQueueUrl, 2);
  for (const event of events) {
    await p.pipeline.sqs.send(
      new SendMessageCommand({ QueueUrl: ledger.bufferDeadLetterQueueUrl, MessageBody: event.Body ?? '' }),
    );
  }
  await p.pipeline.startLedgerConsumer();
  expect(await count(ledger.bufferDeadLetterQueueUrl)).toBe(2);
  // Before: the idempotency record says sent; the ledger has no SES event of it.
  const before = JSON.parse(cli(['status', '--json', key]).stdout) as { status: string; events: unknown[] };
  expect(before).toMatchObject({ status: 'sent', events: [] });

  const dry = cli(['dlq', 'redrive', '--queue', 'ledger', '--dry-run']);
  expect(dry).toMatchObject({ status: 0 });
  expect(dry.stdout).toContain('Would redrive about 2 SES event(s) through the ledger function');
  expect(existsSync(flagFile)).toBe(false);

  const run = cli(['dlq', 'redrive', '--queue', 'ledger', '--yes']);
  expect(run).toMatchObject({ status: 0 });
  expect(run.stdout).toContain(
    `Redrove the ledger DLQ of the local pipeline (${stateDir}) through the ledger function: 2 message(s) before, 0 after.`,
  );
  expect(run.stdout).toContain('is disabled again.');
  expect(run.stderr).toContain('0 left (0 visible, 0 in flight)');

  expect(existsSync(flagFile)).toBe(false);
  expect(await count(ledger.bufferDeadLetterQueueUrl)).toBe(0);
  // Nothing was sent to the buffer: the ledger function read its DLQ.
  expect(await count(ledger.bufferQueueUrl)).toBe(0);
  const status = JSON.parse(cli(['status', '--json', key]).stdout) as { status: string; events: { type: string }[] };
  expect(status.status).toBe('delivered');
  expect(status.events.map((e) => e.type)).toEqual(expect.arrayContaining(['Send', 'Delivery']));
  // The ledger consumer read the DLQ through its second source only while the flag was there.
  expect(p.pipeline.batches.filter((b) => (b as { source?: string }).source === 'dead-letters').length).toBeGreaterThan(
    0,
  );
});

test('an event the ledger function keeps failing on stops the redrive after --stall: how many remain and why, flag off', async () => {
  const { ledger } = p.pipeline.resources;
  await p.pipeline.sqs.send(
    new SendMessageCommand({ QueueUrl: ledger.bufferDeadLetterQueueUrl, MessageBody: 'not an SNS envelope' }),
  );
  const run = cli(['dlq', 'redrive', '--queue', 'ledger', '--stall', '3', '--yes']);
  expect(run.status).toBe(1);
  expect(run.stdout).toContain('through the ledger function: 1 message(s) before, 1 after.');
  expect(run.stderr).toContain('1 message(s) remain in the ledger DLQ');
  expect(run.stderr).toContain('the ledger function fails on them again');
  expect(existsSync(flagFile)).toBe(false);
  expect(await count(ledger.bufferDeadLetterQueueUrl)).toBe(1);
});

test('a redrive killed midway leaves the switch on: verify reports it with the fix, and --stop turns it off', async () => {
  const { ledger } = p.pipeline.resources;
  // A poison event keeps the redrive running (it never drains); it is killed before it can disable the switch.
  await p.pipeline.sqs.send(
    new SendMessageCommand({ QueueUrl: ledger.bufferDeadLetterQueueUrl, MessageBody: 'still not an SNS envelope' }),
  );
  const child = spawn(process.execPath, cliArgv(['dlq', 'redrive', '--queue', 'ledger', '--stall', '600', '--yes']), {
    cwd: REPO_ROOT,
    env: cliEnv(stateDir),
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until('the redrive turned the switch on', () => existsSync(flagFile), 60_000);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  expect(existsSync(flagFile)).toBe(true);

  // verify finds it (--timeout 1: the canary's own result does not matter here).
  const verify = cli(['verify', '--json', '--timeout', '1']);
  const checks = verify.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { name: string; status: string; detail: string; fix?: string });
  const check = checks.find((c) => c.name.includes('redrive mapping is off'));
  expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('Enabled') });
  expect(check?.fix).toContain('email-pipeline dlq redrive --queue ledger --stop');
  expect(verify.status).toBe(1);

  const stop = cli(['dlq', 'redrive', '--queue', 'ledger', '--stop']);
  expect(stop).toMatchObject({ status: 0 });
  expect(stop.stdout).toContain(
    `Disabled the local ledger consumer's DLQ source (flag file ${flagFile}) (it was Enabled)`,
  );
  expect(stop.stdout).toMatch(/[12] message\(s\) remain in the ledger DLQ/);
  expect(existsSync(flagFile)).toBe(false);
  const again = cli(['dlq', 'redrive', '--queue', 'ledger', '--stop']);
  expect(again).toMatchObject({ status: 0 });
  expect(again.stdout).toContain('was already Disabled: nothing to stop.');
});

test('--code and --key are refused on the ledger DLQ: it holds SES events, not sends', () => {
  for (const extra of [
    ['--code', 'RetryBudgetExhausted'],
    ['--key', 'k'],
  ]) {
    const run = cli(['dlq', 'redrive', '--queue', 'ledger', '--yes', ...extra]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('the ledger DLQ holds SES events, not sends');
  }
  expect(existsSync(flagFile)).toBe(false);
});
