/**
 * Callbacks end to end on the emulators: emails to the mailbox simulator's success, bounce and
 * complaint addresses go through the real send, ledger and callback bundles, and a receiver on
 * 127.0.0.1 gets their status changes. Every request verifies with the reference library
 * (`standardwebhooks`) under the secret outputs.json names; a receiver that answers 503 to the
 * first try of each message gets it again with the same id and body, and never again after its
 * 2xx (a copy of a change already delivered is dropped); a team's callback is told only the
 * statuses it asked for; 404 is not retried and 410 disables the team's callback, both with
 * the reason on the callbacks DLQ. `email-pipeline callbacks replay` (the real CLI) has the
 * function POST a key's stored callbacks once more, with their ids and bodies.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { Webhook } from 'standardwebhooks';
import { CALLBACK_ATTRIBUTE, CALLBACK_STATE_KEY_PREFIX } from '../../lambdas/kernel/callbacks/names';
import { drainQueue } from '../../tools/dev/local/queues';
import { localOutputs } from '../../tools/dev/local/state';
import { cliArgv, cliEnv, email, runProcess, startTestPipeline, until, type TestPipeline } from './support';

/** One request the receiver got, and what it answered. */
interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly answered: number;
  readonly at: number;
}

const received: Received[] = [];
const tried = new Set<string>();

/** `/hooks`: 503 to the first try of each message id, 204 after; `/gone`: 410; `/missing`: 404. */
function answer(path: string, id: string): number {
  if (path === '/gone') return 410;
  if (path === '/missing') return 404;
  if (tried.has(id)) return 204;
  tried.add(id);
  return 503;
}

let server: Server;
let p: TestPipeline;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = answer(request.url ?? '', String(request.headers['webhook-id']));
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: status,
        at: Date.now(),
      });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p = await startTestPipeline({
    settings: {
      callbackUrl: `${base}/hooks`,
      callbackRetryBaseSeconds: 1,
      teams: {
        billing: { senders: ['billing@example.com'], callbackUrl: `${base}/gone` },
        security: {
          senders: ['security@example.com'],
          callbackUrl: `${base}/missing`,
          callbackStatuses: ['delivered'],
        },
      },
    },
    ledger: true,
  });
  await p.pipeline.startCallbackConsumer();
}, 90_000);

afterAll(async () => {
  await p?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

async function publish(key: string, to: string, topicArn = p.pipeline.resources.topicArn): Promise<void> {
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: topicArn,
      Message: JSON.stringify(email(to)),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } },
    }),
  );
}

const bodyOf = (request: Received) =>
  JSON.parse(request.body) as { type: string; data: { key: string; status: string; event?: { detail?: string } } };
const toHooks = () => received.filter((r) => r.path === '/hooks');
const delivered = (key: string, status: string) =>
  toHooks().some((r) => r.answered === 204 && bodyOf(r).data.key === key && bodyOf(r).data.status === status);

async function callbacksDrained(): Promise<boolean> {
  const { callbacks } = p.pipeline.resources;
  const depth = await p.pipeline.sqs.send(
    new (await import('@aws-sdk/client-sqs')).GetQueueAttributesCommand({
      QueueUrl: callbacks!.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const a = depth.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) === 0;
}

test('delivered, bounced and complained reach the callback URL, signed, once each after a 503', async () => {
  const keys = { success: `ok-${p.name}`, bounce: `bounce-${p.name}`, complaint: `complaint-${p.name}` };
  await publish(keys.success, 'success@simulator.amazonses.com');
  await publish(keys.bounce, 'bounce@simulator.amazonses.com');
  await publish(keys.complaint, 'complaint@simulator.amazonses.com');
  await until(
    'the three outcomes delivered to the receiver',
    () =>
      delivered(keys.success, 'delivered') &&
      delivered(keys.bounce, 'bounced') &&
      delivered(keys.complaint, 'complained'),
    60_000,
  );
  await until('the callbacks queue drained', callbacksDrained, 30_000);

  // The secret is the one outputs.json gives the publisher; another team's does not verify.
  const outputs = localOutputs(p.pipeline.resources, p.endpoints, 'x', { statusUrl: '', cancelUrl: '' });
  const secret = outputs.CallbackSigningSecret!;
  expect(secret).toMatch(/^whsec_/);
  const verifier = new Webhook(secret);
  const other = new Webhook(outputs.Teams!.billing!.CallbackSigningSecret!);
  const hooks = toHooks();
  for (const request of hooks) {
    const headers = request.headers as Record<string, string>;
    expect(verifier.verify(request.body, headers)).toEqual(JSON.parse(request.body));
    expect(() => other.verify(request.body, headers)).toThrow();
  }
  // Each message id: a 503 first, then once more with the same body and a 2xx, then never again.
  const byId = new Map<string, Received[]>();
  for (const request of hooks) {
    const id = String(request.headers['webhook-id']);
    byId.set(id, [...(byId.get(id) ?? []), request]);
  }
  for (const [id, tries] of byId) {
    expect([id, tries.map((t) => t.answered)]).toEqual([id, [503, 204]]);
    expect(tries[1]!.body).toBe(tries[0]!.body);
  }
  const statuses = (key: string) =>
    hooks.filter((r) => r.answered === 204 && bodyOf(r).data.key === key).map((r) => bodyOf(r).data.status);
  expect(statuses(keys.success).sort()).toEqual(['delivered', 'sent']);
  expect(statuses(keys.bounce)).toContain('bounced');
  expect(statuses(keys.complaint)).toContain('complained');
  const bounce = hooks.find((r) => bodyOf(r).data.key === keys.bounce && bodyOf(r).data.status === 'bounced')!;
  expect(bodyOf(bounce).type).toBe('email.bounced');
  expect(bodyOf(bounce).data.event?.detail).toBeDefined();
}, 120_000);

test('a copy of a change already delivered is not POSTed again', async () => {
  const { callbacks } = p.pipeline.resources;
  const done = toHooks().find((r) => r.answered === 204)!;
  const id = String(done.headers['webhook-id']);
  const { data } = bodyOf(done);
  // The change as the topic delivers it: the ledger's report for the key (a second copy from SNS).
  const item = await p.pipeline.dynamodb.send(
    new GetItemCommand({ TableName: p.pipeline.resources.ledger.tableName, Key: { key: { S: data.key } } }),
  );
  const ledger = unmarshall(item.Item!);
  const before = received.length;
  await p.pipeline.sqs.send(
    new SendMessageCommand({
      QueueUrl: callbacks!.queueUrl,
      MessageBody: JSON.stringify({ key: data.key, status: data.status, events: ledger.events, sequence: 1 }),
      MessageAttributes: {
        status: { DataType: 'String', StringValue: data.status },
        'idempotency-key': { DataType: 'String', StringValue: data.key },
      },
    }),
  );
  await until(
    'the copy dropped',
    () =>
      p.pipeline.lines.some(
        (l) => l.json?.message === 'callback already delivered; not sent again' && l.json.webhookId === id,
      ),
    20_000,
  );
  expect(received.slice(before).filter((r) => r.headers['webhook-id'] === id)).toEqual([]);
  const stored = await p.pipeline.dynamodb.send(
    new GetItemCommand({ TableName: callbacks!.tableName, Key: { key: { S: data.key }, id: { S: id } } }),
  );
  expect(unmarshall(stored.Item!)).toMatchObject({ state: 'delivered', attempts: 2, lastResult: 'HTTP 204' });
}, 60_000);

test("a team's callback hears only its statuses; 404 is not retried, 410 disables the callback", async () => {
  const teams = p.pipeline.resources.teams!;
  const { callbacks } = p.pipeline.resources;
  const reasonsOf = (letters: { MessageAttributes?: Record<string, { StringValue?: string }> }[]) =>
    letters.map((m) => m.MessageAttributes?.[CALLBACK_ATTRIBUTE.failure]?.StringValue ?? '');
  await publish(`sec-${p.name}`, 'success@simulator.amazonses.com', teams.security!.topicArn);
  await publish(`bill-${p.name}`, 'success@simulator.amazonses.com', teams.billing!.topicArn);
  // security's delivered (404), billing's sent and delivered (410, or disabled by then).
  const reasons = reasonsOf(await drainQueue(p.pipeline.sqs, callbacks!.deadLetterQueueUrl, 3, 60_000));
  const security = received.filter((r) => r.path === '/missing');
  // Only `delivered` was asked for: one try, no retry of a 404.
  expect(security.map((r) => [bodyOf(r).data.status, r.answered])).toEqual([['delivered', 404]]);
  // A team's key comes back as its publisher wrote it, not as the ledger's hash.
  expect(bodyOf(security[0]!).data.key).toBe(`sec-${p.name}`);
  expect(reasons.filter((r) => r === 'HTTP 404 Not Found: not retried')).toHaveLength(1);
  const gone = received.filter((r) => r.path === '/gone');
  expect(gone.length).toBeGreaterThanOrEqual(1);
  expect(gone.every((r) => r.answered === 410)).toBe(true);
  expect(reasons.filter((r) => r.includes('410 Gone'))).toHaveLength(2);
  const state = await p.pipeline.dynamodb.send(
    new GetItemCommand({
      TableName: callbacks!.tableName,
      Key: { key: { S: `${CALLBACK_STATE_KEY_PREFIX}billing` }, id: { S: 'state' } },
    }),
  );
  expect(unmarshall(state.Item!).disabledReason).toContain('HTTP 410 Gone');

  // Disabled: billing's next changes go to the DLQ, saying so, without a request.
  await publish(`bill2-${p.name}`, 'success@simulator.amazonses.com', teams.billing!.topicArn);
  const later = reasonsOf(await drainQueue(p.pipeline.sqs, callbacks!.deadLetterQueueUrl, 2, 60_000));
  expect(later.every((r) => r.startsWith('the callback is disabled: HTTP 410 Gone'))).toBe(true);
  expect(received.filter((r) => r.path === '/gone')).toHaveLength(gone.length);
}, 120_000);

test('a key the send function dead-letters is told as email.dead-lettered, with its error code', async () => {
  const key = `dead-${p.name}`;
  // No subject: refused at once (a permanent failure), never sent, so no SES event will tell of it.
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: p.pipeline.resources.topicArn,
      Message: JSON.stringify({ to: p.address('dead'), text: 'no subject' }),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } },
    }),
  );
  await until('the dead letter told', () => delivered(key, 'dead-lettered'), 30_000);
  const told = toHooks().filter((r) => bodyOf(r).data.key === key);
  expect(told.map((r) => r.answered)).toEqual([503, 204]);
  const body = bodyOf(told[1]!);
  expect(body.type).toBe('email.dead-lettered');
  const letter = p.decisions('dead-lettered').find((d) => d.dedupeKey === key);
  expect(body.data.event).toMatchObject({ type: 'DeadLettered', detail: letter?.errorCode });
}, 60_000);

test('callbacks replay --key (the real CLI) POSTs each stored callback of the key once more, same id and body', async () => {
  const delivered = toHooks().filter((r) => r.answered === 204);
  const key = bodyOf(delivered[0]!).data.key;
  const ids = [
    ...new Set(delivered.filter((r) => bodyOf(r).data.key === key).map((r) => String(r.headers['webhook-id']))),
  ];
  const stateDir = mkdtempSync(path.join(tmpdir(), 'callbacks-cli-'));
  try {
    const outputs = localOutputs(p.pipeline.resources, p.endpoints, 'x', { statusUrl: '', cancelUrl: '' });
    writeFileSync(path.join(stateDir, 'outputs.json'), JSON.stringify(outputs));
    const before = received.length;
    // A process this one does not block on: the receiver runs in this process.
    const run = await runProcess(process.execPath, cliArgv(['callbacks', 'replay', '--key', key, '--yes']), {
      env: cliEnv(stateDir),
    });
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    expect(run.stdout).toContain(String(ids.length));
    await until('each callback of the key told again', () =>
      ids.every((id) => received.slice(before).some((r) => r.headers['webhook-id'] === id)),
    );
    await until('the callbacks queue drained', callbacksDrained, 30_000);
    const again = received.slice(before);
    expect(again.map((r) => String(r.headers['webhook-id'])).sort()).toEqual([...ids].sort());
    for (const request of again) {
      const first = delivered.find((r) => r.headers['webhook-id'] === request.headers['webhook-id'])!;
      expect(request.body).toBe(first.body);
      expect(
        new Webhook(outputs.CallbackSigningSecret!).verify(request.body, request.headers as Record<string, string>),
      ).toBeDefined();
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}, 90_000);
