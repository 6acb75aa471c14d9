/**
 * `email-pipeline callbacks` on the emulators, as an operator runs it (a real CLI process): the
 * callbacks' resources made as the local pipeline makes them (createCallbackResources, a pipeline
 * callback and team billing's), stored callbacks and dead letters put in place as the callback
 * function leaves them, and an outputs.json naming them. list shows a dead letter's reason and a
 * key's stored callbacks; redrive moves a team's dead letter back to the queue without the
 * function's diagnosis; replay --key sends one replay message per stored callback with one replay
 * id; replay --since only those at or after the time (and --team only the team's); enable deletes
 * the state item a 410 left. Errors: an unknown team lists the teams, replay without a selection is
 * a usage error.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CreateTopicCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { CALLBACK_ATTRIBUTE, CALLBACK_STATE_KEY_PREFIX } from '../../lambdas/kernel/callbacks/names';
import { ledgerKey } from '../../lambdas/kernel/ledger/schema';
import { teamKey } from '../../lambdas/kernel/teams';
import {
  createCallbackResources,
  newSigningSecret,
  type CallbackResources,
} from '../../tools/dev/local/callback-resources';
import { emulatorClients, type EmulatorClients } from '../../tools/dev/local/emulators';
import { drainQueue } from '../../tools/dev/local/queues';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { endpointsFromEnv, runCli, uniqueName } from './support';

/** Billing's order-7 (a team's key: hashed) and the pipeline's own order-8. */
const BILLING_KEY = ledgerKey(teamKey('billing', 'order-7'));
const OWN_KEY = ledgerKey('order-8');
const NOW = Date.now();
const ago = (hours: number) => new Date(NOW - hours * 3_600_000).toISOString();

let clients: EmulatorClients;
let db: DynamoDBDocumentClient;
let resources: CallbackResources;
let stateDir: string;

async function putCallback(key: string, id: string, fields: Record<string, unknown>): Promise<void> {
  const at = fields.at as string;
  await db.send(
    new PutCommand({
      TableName: resources.tableName,
      Item: {
        key,
        id,
        day: at.slice(0, 10),
        body: JSON.stringify({ type: `email.${String(fields.status)}` }),
        ...fields,
      },
    }),
  );
}

async function deadLetter(body: object, attributes: Record<string, string>): Promise<void> {
  await clients.sqs.send(
    new SendMessageCommand({
      QueueUrl: resources.deadLetterQueueUrl,
      MessageBody: JSON.stringify(body),
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
      ),
    }),
  );
}

beforeAll(async () => {
  const endpoints = endpointsFromEnv();
  clients = emulatorClients(endpoints);
  db = DynamoDBDocumentClient.from(clients.dynamodb);
  const name = uniqueName('cbcli');
  const topic = await clients.sns.send(new CreateTopicCommand({ Name: `${name}-status` }));
  const made = await createCallbackResources(
    clients,
    // Team billing's callback only: a second subscription of the same queue to the topic, with
    // another filter, is refused (by fauxqs as by SNS). The outputs name the pipeline's own too.
    loadLocalSettings({
      teams: { billing: { senders: ['billing@example.com'], callbackUrl: 'http://127.0.0.1:9/billing' } },
    }),
    name,
    topic.TopicArn ?? '',
  );
  if (!made) throw new Error('no callback resources were made');
  resources = made;
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'callbacks-cli-'));
  writeFileSync(
    path.join(stateDir, 'outputs.json'),
    JSON.stringify({
      SnsEndpoint: endpoints.sns,
      SqsEndpoint: endpoints.sqs,
      DynamoDbEndpoint: endpoints.dynamodb,
      Callbacks: {
        QueueUrl: resources.queueUrl,
        DeadLetterQueueUrl: resources.deadLetterQueueUrl,
        TableName: resources.tableName,
      },
      CallbackSigningSecret: newSigningSecret(),
      Teams: {
        billing: {
          TopicArn: 'arn:aws:sns:us-east-1:000000000000:billing',
          CallbackSigningSecret: resources.targets.billing?.secret,
        },
      },
    }),
  );
  await putCallback(BILLING_KEY, 'msg_sent', {
    team: 'billing',
    status: 'sent',
    at: ago(3),
    state: 'delivered',
    attempts: 1,
    lastResult: 'HTTP 200',
    deliveredAt: ago(3),
  });
  await putCallback(BILLING_KEY, 'msg_delivered', {
    team: 'billing',
    status: 'delivered',
    at: ago(0.2),
    attempts: 3,
    lastResult: 'HTTP 503',
  });
  await putCallback(OWN_KEY, 'msg_own', { team: '*', status: 'sent', at: ago(5), state: 'delivered', attempts: 1 });
  await deadLetter(
    { key: BILLING_KEY, status: 'delivered', events: [], team: 'billing' },
    {
      status: 'delivered',
      'idempotency-key': BILLING_KEY,
      team: 'billing',
      [CALLBACK_ATTRIBUTE.failure]: 'HTTP 404 Not Found: not retried',
      [CALLBACK_ATTRIBUTE.firstTry]: ago(0.2),
    },
  );
  // Moved by the redrive policy: no reason of the function's.
  await deadLetter({ key: OWN_KEY, status: 'sent', events: [] }, { status: 'sent', 'idempotency-key': OWN_KEY });
});

afterAll(() => {
  db?.destroy();
  clients?.destroy();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(stateDir, ['callbacks', ...args], { timeoutMs: 120_000 });
const jsonLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const attributes = (message: Message) =>
  Object.fromEntries(Object.entries(message.MessageAttributes ?? {}).map(([name, v]) => [name, v.StringValue]));

async function visible(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes.ApproximateNumberOfMessages);
}

test('list shows each dead letter with its reason; --team and --key select; --history lists a key', () => {
  const all = cli('list', '--json');
  expect(all.status).toBe(0);
  const letters = jsonLines(all.stdout);
  expect(letters.map((l) => l.key).sort()).toEqual([BILLING_KEY, OWN_KEY].sort());
  expect(letters.find((l) => l.key === OWN_KEY)?.reason).toContain('redrive policy');

  const billing = cli('list', '--team', 'billing');
  expect(billing.status).toBe(0);
  expect(billing.stdout).toContain('HTTP 404 Not Found: not retried');
  expect(billing.stdout).toContain(`key=${BILLING_KEY}`);
  expect(billing.stdout).not.toContain(OWN_KEY);
  expect(jsonLines(cli('list', '--key', 'order-8', '--json').stdout).map((l) => l.key)).toEqual([OWN_KEY]);

  const history = cli('list', '--key', 'order-7', '--team', 'billing', '--history', '--json');
  expect(history.status).toBe(0);
  expect(jsonLines(history.stdout).map((r) => [r.id, r.status, r.state, r.attempts, r.lastResult])).toEqual([
    ['msg_sent', 'sent', 'delivered', 1, 'HTTP 200'],
    ['msg_delivered', 'delivered', 'retrying', 3, 'HTTP 503'],
  ]);
});

test('redrive --team moves the team dead letter back to the queue without the reason, and only it', async () => {
  const run = cli('redrive', '--team', 'billing', '--yes');
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('Moved 1 callback(s) of team billing');
  const [message] = await drainQueue(clients.sqs, resources.queueUrl, 1);
  expect(JSON.parse(message?.Body ?? '')).toMatchObject({ key: BILLING_KEY, team: 'billing' });
  expect(attributes(message as Message)).toEqual({
    status: 'delivered',
    'idempotency-key': BILLING_KEY,
    team: 'billing',
  });
  expect(jsonLines(cli('list', '--json').stdout).map((l) => l.key)).toEqual([OWN_KEY]);
});

test('replay --key sends one replay message per stored callback of the key, all with one replay id', async () => {
  const run = cli('replay', '--key', 'order-7', '--team', 'billing', '--yes', '--json');
  expect(run.stderr).toBe('');
  const [result] = jsonLines(run.stdout);
  expect(result).toMatchObject({ action: 'replay', count: 2 });
  const messages = await drainQueue(clients.sqs, resources.queueUrl, 2);
  expect(messages.map((m) => JSON.parse(m.Body ?? '') as unknown)).toEqual(
    expect.arrayContaining([
      { replayOf: { key: BILLING_KEY, id: 'msg_sent' } },
      { replayOf: { key: BILLING_KEY, id: 'msg_delivered' } },
    ]),
  );
  for (const m of messages) expect(attributes(m)[CALLBACK_ATTRIBUTE.replay]).toBe(result?.replayId);
  expect(result?.replayId).toMatch(/^[0-9a-f-]{36}$/);
});

test('replay --since takes only the changes at or after the time; with --team only the team', async () => {
  const dry = cli('replay', '--since', '6h', '--team', 'billing', '--dry-run', '--json');
  expect(dry.status).toBe(0);
  const [plan] = jsonLines(dry.stdout);
  expect(plan).toMatchObject({ dryRun: true, count: 2 });
  expect(await visible(resources.queueUrl)).toBe(0);

  const run = cli('replay', '--since', '4h', '--yes', '--json');
  expect(run.stderr).toBe('');
  expect(jsonLines(run.stdout)[0]).toMatchObject({ action: 'replay', count: 2 });
  const messages = await drainQueue(clients.sqs, resources.queueUrl, 2);
  const ids = messages.map((m) => (JSON.parse(m.Body ?? '') as { replayOf: { id: string } }).replayOf.id).sort();
  expect(ids).toEqual(['msg_delivered', 'msg_sent']);
  expect(new Set(messages.map((m) => attributes(m)[CALLBACK_ATTRIBUTE.replay])).size).toBe(1);
});

test('enable deletes the state item a 410 left, saying since when and why; a second time, that it was not disabled', async () => {
  const key = { key: `${CALLBACK_STATE_KEY_PREFIX}billing`, id: 'state' };
  await db.send(
    new PutCommand({
      TableName: resources.tableName,
      Item: { ...key, disabledAt: ago(1), disabledReason: 'HTTP 410 Gone' },
    }),
  );
  const run = cli('enable', '--team', 'billing');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain(`was disabled since ${ago(1)} (HTTP 410 Gone)`);
  expect((await db.send(new GetCommand({ TableName: resources.tableName, Key: key }))).Item).toBeUndefined();
  expect(cli('enable', '--team', 'billing').stdout).toContain('was not disabled');
});

test('an unknown team lists the teams; replay without a selection is a usage error', () => {
  const unknown = cli('list', '--team', 'sales');
  expect(unknown.status).toBe(1);
  expect(unknown.stderr).toContain('its teams are billing');
  const neither = cli('replay', '--team', 'billing', '--yes');
  expect(neither.status).toBe(2);
  expect(neither.stderr).toContain('--key K');
});
