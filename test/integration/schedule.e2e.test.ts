/**
 * sendAt and cancel end to end on the emulators: the real send-email and ledger bundles in
 * consumer processes, the local status server with the deployed status and cancel code (GET at the
 * status URL, DELETE at the cancel URL), and the operator CLI's `cancel` as an operator runs it
 * (npm run cancel), against a local pipeline found through its outputs.json. Scheduled copies wait
 * in the schedule queue, moved on by the schedule function's bundle in a consumer of its own, with
 * fauxqs's real delays: the due lane sees a scheduled email once before it is due.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeliveryReport } from '../../lambdas/kernel/ledger/schema';
import { cancelDelivery } from '../../lambdas/status/cancel';
import { lookupDelivery } from '../../lambdas/status/lookup';
import { LOCAL_CANCELLER, startStatusEndpoint, type StatusEndpoint } from '../../tools/dev/local/status-endpoint';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { npmScript } from './npm-script';
import {
  addressedTo,
  cliEnv,
  email,
  runCli,
  runProcess,
  startTestPipeline,
  until,
  type ProcessRun,
  type TestPipeline,
} from './support';

let p: TestPipeline;
let status: StatusEndpoint;
let stateDir: string;

beforeAll(async () => {
  p = await startTestPipeline({ ledger: true, schedule: true });
  const { resources } = p.pipeline;
  const settings = loadLocalSettings();
  const target = {
    db: DynamoDBDocumentClient.from(p.pipeline.dynamodb),
    ledgerTableName: resources.ledger.tableName,
    idempotencyTableName: resources.tableName,
    keyPrefix: settings.idempotencyKeyPrefix,
  };
  status = await startStatusEndpoint({
    port: 0,
    lookup: (key) => lookupDelivery(target, key),
    cancel: (key) =>
      cancelDelivery(
        { ...target, dynamodb: p.pipeline.dynamodb, dedupeWindowSeconds: settings.dedupeWindowSeconds },
        key,
        LOCAL_CANCELLER,
      ),
  });
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'schedule-state-'));
  writeFileSync(
    path.join(stateDir, 'outputs.json'),
    JSON.stringify({
      TopicArn: resources.topicArn,
      SqsEndpoint: p.endpoints.sqs,
      SnsEndpoint: p.endpoints.sns,
      DynamoDbEndpoint: p.endpoints.dynamodb,
      LedgerTableName: resources.ledger.tableName,
      StatusUrl: `${status.url}/deliveries/`,
      CancelUrl: `${status.cancelUrl}/deliveries/`,
    }),
  );
}, 60_000);

afterAll(async () => {
  await status?.close();
  await p?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

async function report(key: string): Promise<DeliveryReport> {
  return (await (await fetch(`${status.url}/deliveries/${encodeURIComponent(key)}`)).json()) as DeliveryReport;
}

async function cancelOverHttp(
  key: string,
): Promise<{ statusCode: number; body: { outcome: string; report: DeliveryReport } }> {
  const response = await fetch(`${status.cancelUrl}/deliveries/${encodeURIComponent(key)}`, { method: 'DELETE' });
  return { statusCode: response.status, body: (await response.json()) as { outcome: string; report: DeliveryReport } };
}

/** `npm run -s cancel -- <key>` as an operator runs it, against this pipeline. */
function cancelCli(key: string): Promise<ProcessRun> {
  const { command, args } = npmScript('cancel', key);
  return runProcess(command, args, { env: cliEnv(stateDir) });
}

/** The keys `deliveries --outcome <status>` lists (--json, one object a line). */
function listed(status: string): string[] {
  const run = runCli(stateDir, ['deliveries', '--outcome', status, '--since', '10m', '--json']);
  expect(run).toMatchObject({ status: 0 });
  return run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { key: string }).key);
}

function keyOf(label: string): string {
  return `${label}-${p.name}`;
}

test('a send due in 30 s is not sent before its time, reports scheduled meanwhile, and is sent once after it', async () => {
  const key = keyOf('due-in-30s');
  const to = p.address('scheduled');
  const sendAt = new Date(Date.now() + 30_000);
  sendAt.setMilliseconds(0);
  await p.publish({ ...email(to), sendAt: sendAt.toISOString() }, { key });

  await until('the first deferral', () => p.decisions('scheduled').some((d) => d.dedupeKey === key));
  await until('status scheduled', async () => (await report(key)).status === 'scheduled');
  expect((await report(key)).events).toEqual([
    expect.objectContaining({ type: 'Scheduled', detail: `sendAt ${sendAt.toISOString()}` }),
  ]);
  // While it waits, the copy is in the schedule queue, and nothing of it in the work queue.
  const held = (depth: { visible: number; inFlight: number; delayed: number }) =>
    depth.visible + depth.inFlight + depth.delayed;
  await until(
    'the copy waiting in the schedule queue',
    async () => held(await p.pipeline.queueDepth('schedule')) === 1,
  );
  await until('the work queue empty', async () => held(await p.pipeline.queueDepth('queue')) === 0);
  expect(Date.now()).toBeLessThan(sendAt.getTime());

  // Watch the mailbox until the email appears: it must not appear before sendAt.
  let firstSeenAt = 0;
  await until(
    'the email after its sendAt',
    async () => {
      const found = (await p.emails()).length > 0;
      if (found) firstSeenAt = Date.now();
      return found;
    },
    90_000,
  );
  expect(firstSeenAt).toBeGreaterThanOrEqual(sendAt.getTime());
  // The consumer logs its decision just after SES took the email.
  await until('the sent decision', () => p.decisions('sent').some((d) => d.dedupeKey === key));
  const sent = p.decisions('sent').filter((d) => d.dedupeKey === key);
  expect(sent).toHaveLength(1);
  expect(Date.parse(String(sent[0]?.timestamp))).toBeGreaterThanOrEqual(sendAt.getTime());

  // The due lane received it once while it waited (its one deferral); the schedule consumer forwarded it when due.
  expect(p.decisions('scheduled').filter((d) => d.dedupeKey === key)).toHaveLength(1);
  const forwarded = p.pipeline.lines.filter((l) => l.consumer === 'schedule' && l.json?.message === 'due: forwarded');
  expect(forwarded).toHaveLength(1);
  expect(forwarded[0]?.json).toMatchObject({ lane: 'normal' });
  // The schedule consumer runs with the schedule function's memory (128 MB) as its limit, as Lambda would.
  expect(p.pipeline.outOfMemory).toEqual([]);

  // Once: its status moves on from scheduled as the ledger records the send, and no second email comes.
  await until('status sent (or later)', async () => !['scheduled', 'in-progress'].includes((await report(key)).status));
  await p.publish({ ...email(to), sendAt: sendAt.toISOString() }, { key });
  await until('the publish retry suppressed', () => p.decisions('duplicate').some((d) => d.dedupeKey === key), 30_000);
  expect(await p.emails()).toHaveLength(1);
}, 150_000);

test('a cancelled scheduled key is never sent and reports cancelled, with when and by whom; twice is harmless', async () => {
  const key = keyOf('cancelled');
  const to = p.address('cancelled');
  const sendAt = new Date(Date.now() + 15_000).toISOString();
  await p.publish({ ...email(to), sendAt }, { key });
  await until('the first deferral', () => p.decisions('scheduled').some((d) => d.dedupeKey === key));
  // The index by outcome files it as scheduled, then as cancelled only.
  await until('listed as scheduled', () => listed('scheduled').includes(key));

  const first = await cancelOverHttp(key);
  expect(first.statusCode).toBe(200);
  expect(first.body.outcome).toBe('cancelled');
  expect(first.body.report.status).toBe('cancelled');
  expect(first.body.report.events.map((e) => e.type)).toEqual(['Scheduled', 'Cancelled']);
  expect(first.body.report.events[1]).toMatchObject({ detail: `by ${LOCAL_CANCELLER}` });
  expect(listed('cancelled')).toContain(key);
  expect(listed('scheduled')).not.toContain(key);

  const cli = await cancelCli(key);
  expect(cli.code).toBe(0);
  expect(cli.stdout).toContain(`${key}: cancelled`);
  expect(cli.stderr).toContain('already cancelled');

  // Its copy comes due and is suppressed at its claim: no email, ever.
  await until('the due copy suppressed', () => p.decisions('cancelled').some((d) => d.dedupeKey === key), 60_000);
  expect(await p.emails()).toEqual(
    expect.not.arrayContaining([expect.objectContaining({ destination: expect.objectContaining({ to: [to] }) })]),
  );
  expect(addressedTo(await p.emails(), to)).toHaveLength(0);
  expect((await report(key)).status).toBe('cancelled');
}, 120_000);

test('cancelling a key already sent is refused: 409 over HTTP, exit 1 from the CLI, and its status shown', async () => {
  const key = keyOf('sent');
  const to = p.address('sent-now');
  await p.publish(email(to), { key });
  await until('the email', async () => addressedTo(await p.emails(), to).length > 0);
  await until('status past in-progress', async () => !['unknown', 'in-progress'].includes((await report(key)).status));

  const http = await cancelOverHttp(key);
  expect(http.statusCode).toBe(409);
  expect(http.body.outcome).toBe('too-late');
  expect(['sent', 'delivered']).toContain(http.body.report.status);

  const cli = await cancelCli(key);
  expect(cli.code).toBe(1);
  expect(cli.stdout).toMatch(new RegExp(`${key}: (sent|delivered)`));
  expect(cli.stderr).toContain('too late to cancel');
  expect(addressedTo(await p.emails(), to)).toHaveLength(1);
}, 60_000);

test('a key cancelled before it was ever published is never sent when it comes', async () => {
  const key = keyOf('pre-cancelled');
  const to = p.address('pre-cancelled');
  expect((await cancelOverHttp(key)).body.outcome).toBe('cancelled');
  await p.publish(email(to), { key });
  await until('the copy suppressed', () => p.decisions('cancelled').some((d) => d.dedupeKey === key));
  expect(addressedTo(await p.emails(), to)).toHaveLength(0);
}, 60_000);
