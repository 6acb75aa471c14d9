/**
 * The delivery status of a key against DynamoDB Local: ledger items written
 * as lambdas/kernel/ledger/schema.ts describes them, idempotency records written by
 * Powertools itself (configured as the send function configures it); then the
 * same lookup through the local status server and through `npm run status`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { ledgerKey, type DeliveryReport, type LedgerItem } from '../../lambdas/kernel/ledger/schema';
import { ENV, LEDGER_ENV } from '../../lambdas/kernel/environment';
import { lookupDelivery, type LookupTarget } from '../../lambdas/status/lookup';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { createResources } from '../../tools/dev/local/resources';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { localOutputs, type LocalOutputs } from '../../tools/dev/local/state';
import { startStatusEndpoint, type StatusEndpoint } from '../../tools/dev/local/status-endpoint';
import { cliArgv, cliEnv, endpointsFromEnv, runProcess, uniqueName, type ProcessRun, nowSeconds } from './support';

const endpoints = endpointsFromEnv();
const clients = emulatorClients(endpoints);
const db = DynamoDBDocumentClient.from(clients.dynamodb);
const settings = loadLocalSettings();
const HOUR = 3600;

let target: LookupTarget;
let outputs: LocalOutputs;
let persistence: DynamoDBPersistenceLayer;
beforeAll(async () => {
  const resources = await createResources(clients, settings, uniqueName('status'));
  target = {
    ledgerTableName: resources.ledger.tableName,
    idempotencyTableName: resources.tableName,
    keyPrefix: settings.idempotencyKeyPrefix,
  };
  outputs = localOutputs(resources, endpoints, settings.idempotencyKeyPrefix, {
    statusUrl: 'unused',
    cancelUrl: 'unused',
  });
  // The send function's persistence settings (lambdas/send-email/claim/claim.ts).
  persistence = new DynamoDBPersistenceLayer({ tableName: resources.tableName, awsSdkV3Client: clients.dynamodb });
  persistence.configure({
    config: new IdempotencyConfig({ eventKeyJmesPath: 'key', expiresAfterSeconds: settings.dedupeWindowSeconds }),
    keyPrefix: settings.idempotencyKeyPrefix,
  });
});
afterAll(() => clients.destroy());

const lookup = (key: string) => lookupDelivery({ ...target, db }, key);

/** Writes a key's ledger item where the ledger function does: under the key's tag value. */
function ledgerItem(key: string, fields: Partial<LedgerItem>): Promise<unknown> {
  const item: LedgerItem = {
    key: ledgerKey(key),
    events: [],
    updatedAt: new Date().toISOString(),
    expiration: nowSeconds() + HOUR,
  };
  return db.send(new PutCommand({ TableName: target.ledgerTableName, Item: { ...item, ...fields } }));
}

/** What the send function claims and completes for a key. */
const request = (key: string) => ({ key, email: { to: ['a@example.com'], subject: 'Hi', text: 'Hello' } });

describe('lookupDelivery', () => {
  test('a ledger item gives its status, SES MessageId and timeline, oldest first', async () => {
    const key = uniqueName('delivered');
    await ledgerItem(key, {
      status: 'delivered',
      sesMessageId: 'ses-1',
      updatedAt: '2026-12-01T10:00:01.000Z',
      events: [
        { type: 'Delivery', at: '2026-12-01T10:00:01.000Z', sesMessageId: 'ses-1' },
        { type: 'Send', at: '2026-12-01T10:00:00.000Z', sesMessageId: 'ses-1' },
      ],
    });
    expect(await lookup(key)).toEqual({
      key,
      status: 'delivered',
      sesMessageId: 'ses-1',
      updatedAt: '2026-12-01T10:00:01.000Z',
      events: [
        { type: 'Send', at: '2026-12-01T10:00:00.000Z', sesMessageId: 'ses-1' },
        { type: 'Delivery', at: '2026-12-01T10:00:01.000Z', sesMessageId: 'ses-1' },
      ],
    });
  });

  test('a completed idempotency record without SES events yet is sent, with the MessageId SES gave', async () => {
    const key = uniqueName('sent');
    await persistence.saveInProgress(request(key), 60_000);
    await persistence.saveSuccess(request(key), { sesMessageId: 'ses-2', sentAt: '2026-12-01T10:00:00.000Z' });
    expect(await lookup(key)).toEqual({
      key,
      status: 'sent',
      sesMessageId: 'ses-2',
      events: [],
      updatedAt: '2026-12-01T10:00:00.000Z',
    });
  });

  test('a claim in progress is in-progress', async () => {
    const key = uniqueName('claimed');
    await persistence.saveInProgress(request(key), 60_000);
    expect(await lookup(key)).toEqual({ key, status: 'in-progress', events: [] });
  });

  test('a dead-letter mark without any SES event or claim is dead-lettered, the mark in the timeline', async () => {
    const key = uniqueName('dead');
    const at = '2026-12-01T10:00:00.000Z';
    await ledgerItem(key, { deadLettered: { at, code: 'MessageRejected', reason: 'Email address is not verified' } });
    expect(await lookup(key)).toMatchObject({
      key,
      status: 'dead-lettered',
      events: [{ type: 'DeadLettered', at, detail: 'MessageRejected' }],
    });
  });

  test('an SES status wins over a dead-letter mark (a copy with other content was dead-lettered)', async () => {
    const key = uniqueName('sent-then-copy');
    await ledgerItem(key, {
      status: 'sent',
      sesMessageId: 'ses-3',
      events: [{ type: 'Send', at: '2026-12-01T10:00:00.000Z' }],
      deadLettered: { at: '2026-12-01T10:05:00.000Z', code: 'PayloadMismatch', reason: 'same key, other content' },
    });
    const report = await lookup(key);
    expect(report.status).toBe('sent');
    expect(report.events.map((e) => e.type)).toEqual(['Send', 'DeadLettered']);
  });

  test('an expired ledger item and an expired record count as absent (TTL deletes late)', async () => {
    const key = uniqueName('expired');
    await ledgerItem(key, { status: 'delivered', sesMessageId: 'ses-4', expiration: nowSeconds() - 1 });
    await db.send(
      new PutCommand({
        TableName: target.idempotencyTableName,
        Item: {
          id: (persistence as unknown as { getHashedIdempotencyKey(d: unknown): string }).getHashedIdempotencyKey(
            request(key),
          ),
          status: 'COMPLETED',
          expiration: nowSeconds() - 1,
          data: { sesMessageId: 'ses-4' },
        },
      }),
    );
    expect(await lookup(key)).toEqual({ key, status: 'unknown', events: [] });
  });

  test('a key nobody sent is unknown', async () => {
    expect(await lookup(uniqueName('never'))).toEqual({ key: expect.any(String), status: 'unknown', events: [] });
  });
});

describe('the status and cancel functions (their handlers, as their function URLs call them)', () => {
  /** The parts of a function URL event the handlers read. */
  const urlEvent = (method: string, rawPath: string, userArn?: string) =>
    ({
      rawPath,
      requestContext: { http: { method }, ...(userArn !== undefined ? { authorizer: { iam: { userArn } } } : {}) },
    }) as unknown as LambdaFunctionURLEvent;
  type Answer = { statusCode: number; body: string };

  let status: (event: LambdaFunctionURLEvent) => Promise<LambdaFunctionURLResult>;
  let cancel: (event: LambdaFunctionURLEvent) => Promise<LambdaFunctionURLResult>;
  let added: string[] = [];
  beforeAll(async () => {
    // The environment the construct gives both functions, pointed at DynamoDB Local.
    const env = {
      [LEDGER_ENV.tableName]: target.ledgerTableName,
      [ENV.tableName]: target.idempotencyTableName,
      [ENV.keyPrefix]: target.keyPrefix,
      [ENV.dedupeWindowSeconds]: String(settings.dedupeWindowSeconds),
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    };
    added = Object.keys(env).filter((name) => process.env[name] === undefined);
    Object.assign(process.env, env);
    ({ handler: status } = await import('../../lambdas/status/handler'));
    ({ handler: cancel } = await import('../../lambdas/status/cancel-handler'));
  });
  afterAll(() => {
    for (const name of added) delete process.env[name];
  });

  test('the status function answers GET /deliveries/{key} with the report', async () => {
    const key = uniqueName('fn');
    await ledgerItem(key, { status: 'rejected', sesMessageId: 'ses-8', events: [{ type: 'Reject', at: 'x' }] });
    const result = (await status(urlEvent('GET', `/deliveries/${encodeURIComponent(key)}`))) as Answer;
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toEqual(await lookup(key));
  });

  test('the status function answers 400 for a bad key and 405 for any other method', async () => {
    expect(await status(urlEvent('GET', '/deliveries/%20x'))).toMatchObject({ statusCode: 400 });
    expect(await status(urlEvent('POST', '/deliveries/x'))).toMatchObject({ statusCode: 405 });
  });

  test('a DELETE at the status function cancels nothing, whoever the event names (a forged cancel principal too)', async () => {
    const key = uniqueName('fn-forged');
    for (const caller of ['arn:aws:sts::123456789012:assumed-role/ops/ada', 'arn:aws:iam::123456789012:user/alice']) {
      const refused = (await status(urlEvent('DELETE', `/deliveries/${encodeURIComponent(key)}`, caller))) as Answer;
      expect(refused.statusCode).toBe(405);
      expect(JSON.parse(refused.body).message).toContain('CancelUrl');
    }
    expect(await lookup(key)).toMatchObject({ status: 'unknown' });
  });

  test('the cancel function cancels a key not yet sent, recording the caller its URL authenticated; again is harmless', async () => {
    const key = uniqueName('fn-cancel');
    const caller = 'arn:aws:sts::123456789012:assumed-role/ops/ada';
    const event = urlEvent('DELETE', `/deliveries/${encodeURIComponent(key)}`, caller);
    const first = (await cancel(event)) as Answer;
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({
      outcome: 'cancelled',
      report: { status: 'cancelled', events: [{ type: 'Cancelled', detail: `by ${caller}` }] },
    });
    expect(await lookup(key)).toMatchObject({ status: 'cancelled' });
    const second = (await cancel(event)) as Answer;
    expect(second.statusCode).toBe(200);
    expect(JSON.parse(second.body).outcome).toBe('already-cancelled');
  });

  test('the cancel function checks no identity (IAM on its URL decides): without one it records an unidentified caller', async () => {
    const key = uniqueName('fn-anonymous');
    const answer = (await cancel(urlEvent('DELETE', `/deliveries/${encodeURIComponent(key)}`))) as Answer;
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      report: { status: 'cancelled', events: [{ type: 'Cancelled', detail: 'by an unidentified caller' }] },
    });
  });

  test('the cancel function takes DELETE only: a GET reads nothing there', async () => {
    expect(await cancel(urlEvent('GET', '/deliveries/x'))).toMatchObject({ statusCode: 405 });
  });
});

describe('the local status server', () => {
  let server: StatusEndpoint;
  beforeAll(async () => {
    server = await startStatusEndpoint({ port: 0, lookup });
  });
  afterAll(() => server.close());

  test('GET /deliveries/{key} returns the report as JSON', async () => {
    const key = uniqueName('http/with slash');
    await ledgerItem(key, { status: 'bounced', sesMessageId: 'ses-5', events: [{ type: 'Bounce', at: 'x' }] });
    const response = await fetch(`${server.url}/deliveries/${encodeURIComponent(key)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(((await response.json()) as DeliveryReport).status).toBe('bounced');
  });

  test('a key never sent is 200 unknown; a key that cannot be a dedupe key is 400', async () => {
    const unknown = await fetch(`${server.url}/deliveries/${uniqueName('never')}`);
    expect(unknown.status).toBe(200);
    expect(((await unknown.json()) as DeliveryReport).status).toBe('unknown');
    const bad = await fetch(`${server.url}/deliveries/%20padded`);
    expect(bad.status).toBe(400);
  });
});

describe('npm run status', () => {
  // What `npm run status` runs: the packaged CLI's status command (not blocking: this process serves the endpoint).
  function run(args: string[], stateDir: string): Promise<ProcessRun> {
    return runProcess(process.execPath, cliArgv(['status', ...args]), { cwd: REPO_ROOT, env: cliEnv(stateDir) });
  }

  let stateDir: string;
  beforeAll(() => {
    stateDir = mkdtempSync(path.join(tmpdir(), 'status-cli-'));
    writeFileSync(path.join(stateDir, 'outputs.json'), JSON.stringify(outputs));
  });

  test('--json prints exactly one DeliveryReport object, the lookup result', async () => {
    const key = uniqueName('cli');
    await ledgerItem(key, {
      status: 'complained',
      sesMessageId: 'ses-6',
      events: [
        { type: 'Send', at: '2026-12-01T10:00:00.000Z' },
        { type: 'Complaint', at: '2026-12-01T10:00:05.000Z', detail: 'abuse' },
      ],
    });
    const result = await run(['--json', key], stateDir);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual(await lookup(key));
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });

  test('without --json it prints the status and the timeline for a person', async () => {
    const key = uniqueName('cli-text');
    await ledgerItem(key, {
      status: 'delivered',
      sesMessageId: 'ses-7',
      events: [{ type: 'Delivery', at: '2026-12-01T10:00:01.000Z' }],
    });
    const result = await run([key], stateDir);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${key}: delivered (`);
    expect(result.stdout).toContain('SES message  ses-7');
    expect(result.stdout).toContain('2026-12-01T10:00:01.000Z  Delivery');
  });

  test('a key never sent prints unknown and exits 0; a bad key exits 2 naming the rule', async () => {
    const unknown = await run(['--json', uniqueName('never')], stateDir);
    expect(unknown.code).toBe(0);
    expect(JSON.parse(unknown.stdout).status).toBe('unknown');
    const bad = await run(['--json', 'x'.repeat(300)], stateDir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be at most 256 characters');
  });

  test('without a running local pipeline it exits 1 and says how to start one', async () => {
    const result = await run(['order-42'], mkdtempSync(path.join(tmpdir(), 'status-none-')));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No local pipeline found');
    expect(result.stderr).toContain('npm start');
  });
});
