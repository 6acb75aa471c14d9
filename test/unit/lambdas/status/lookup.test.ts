import { dedupeTagValue } from '../../../../lambdas/send-email/send/email';
/**
 * The status lookup's pure parts: key rules, the idempotency record id (checked
 * against Powertools itself), the HTTP routing shared by the status function
 * and the local server, and the CLI's target and text.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DeliveryReport } from '../../../../lambdas/kernel/ledger/schema';
import { handleStatusRequest } from '../../../../lambdas/status/http';
import { idempotencyRecordId, InvalidKeyError, keyProblem, lookupDelivery } from '../../../../lambdas/status/lookup';
import { formatReport, lookupTargetFromOutputs } from '../../../../lib/cli/status-report';

describe('keyProblem', () => {
  test.each([
    ['', 'must not be empty or start or end with spaces'],
    [' order-42', 'must not be empty or start or end with spaces'],
    ['x'.repeat(257), 'must be at most 256 characters'],
    ['order\n42', 'must not contain control characters'],
    ['order-\ud800', 'must not contain control characters'],
  ])('%j is refused: %s', (key, problem) => {
    expect(keyProblem(key)).toBe(problem);
  });

  test.each(['order-42-shipped', 'order/42', 'x'.repeat(256), 'Grüße 👋'])('%j is a valid key', (key) => {
    expect(keyProblem(key)).toBeUndefined();
  });

  test('lookupDelivery refuses a bad key before reading anything', async () => {
    const db = { send: () => Promise.reject(new Error('must not be called')) };
    await expect(
      lookupDelivery({ db, ledgerTableName: 'l', idempotencyTableName: 'i', keyPrefix: 'p' }, ' padded'),
    ).rejects.toThrow(new InvalidKeyError(' padded', 'must not be empty or start or end with spaces'));
  });
});

describe('lookupDelivery request shapes', () => {
  /** Records each command's input; answers with no item (the shapes are what is checked). */
  function recordingDb() {
    const inputs: unknown[] = [];
    return { inputs, db: { send: async (command: { input: unknown }) => (inputs.push(command.input), {}) } };
  }
  const target = { ledgerTableName: 'Ledger', idempotencyTableName: 'Idem', keyPrefix: 'email-pipeline' };

  test('reads the ledger item by key, then the idempotency record by its Powertools id: two GetItem, nothing else', async () => {
    const { inputs, db } = recordingDb();
    await lookupDelivery({ ...target, db: db as never }, 'order-42');
    expect(inputs).toEqual([
      { TableName: 'Ledger', Key: { key: 'order-42' } },
      { TableName: 'Idem', Key: { id: idempotencyRecordId('email-pipeline', 'order-42') } },
    ]);
  });

  test('a key SES cannot carry as a tag value is looked up under the hash the send tagged it with', async () => {
    const { inputs, db } = recordingDb();
    await lookupDelivery({ ...target, db: db as never }, 'order:42');
    expect(inputs[0]).toEqual({ TableName: 'Ledger', Key: { key: dedupeTagValue('order:42') } });
    expect(dedupeTagValue('order:42')).toMatch(/^sha256-[0-9a-f]{64}$/);
  });

  test('a key asked in decomposed Unicode reads the items of its NFC form and reports that key', async () => {
    const { inputs, db } = recordingDb();

    const report = await lookupDelivery({ ...target, db: db as never }, 'cafe\u0301-42');

    expect(report.key).toBe('caf\u00e9-42');
    expect(inputs).toEqual([
      { TableName: 'Ledger', Key: { key: dedupeTagValue('caf\u00e9-42') } },
      { TableName: 'Idem', Key: { id: idempotencyRecordId('email-pipeline', 'caf\u00e9-42') } },
    ]);
  });
});

describe('idempotencyRecordId', () => {
  test.each(['order-42', 'order/42', 'Grüße 👋', '"quoted"'])(
    "is the id Powertools gives the send function's record of %j",
    (key) => {
      const layer = new DynamoDBPersistenceLayer({
        tableName: 'unused',
        awsSdkV3Client: new DynamoDBClient({ region: 'us-east-1' }),
      });
      // The send function's settings: the key picked by `key`, records under the configured prefix.
      layer.configure({ config: new IdempotencyConfig({ eventKeyJmesPath: 'key' }), keyPrefix: 'email-pipeline' });
      const powertools = (
        layer as unknown as { getHashedIdempotencyKey(data: unknown): string }
      ).getHashedIdempotencyKey({ key, email: { to: ['a@example.com'], subject: 's', text: 't' } });
      expect(idempotencyRecordId('email-pipeline', key)).toBe(powertools);
    },
  );
});

describe('handleStatusRequest', () => {
  const report = (key: string): DeliveryReport => ({ key, status: 'delivered', events: [] });
  const lookup = async (key: string) => {
    const problem = keyProblem(key);
    if (problem) throw new InvalidKeyError(key, problem);
    return report(key);
  };

  test('GET /deliveries/{key} answers 200 with the report as JSON, never cached', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/order-42', lookup);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(JSON.parse(answer.body)).toEqual(report('order-42'));
  });

  test('the key is percent-decoded, and a key with a slash works encoded or not', async () => {
    for (const path of ['/deliveries/order%2F42%20%F0%9F%91%8B', '/deliveries/order/42%20%F0%9F%91%8B']) {
      expect(JSON.parse((await handleStatusRequest('GET', path, lookup)).body).key).toBe('order/42 👋');
    }
  });

  test('a key that cannot be a dedupe key answers 400 naming the rule', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/%20order', lookup);
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body).message).toBe('Invalid key " order": must not be empty or start or end with spaces');
  });

  test('broken percent-encoding answers 400', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/%E0%A4%A', lookup);
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body).message).toContain('not valid percent-encoding');
  });

  test('another path answers 404, another method 405', async () => {
    expect((await handleStatusRequest('GET', '/status/order-42', lookup)).statusCode).toBe(404);
    const post = await handleStatusRequest('POST', '/deliveries/order-42', lookup);
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  test('a store that cannot be read answers 503 and reports the error', async () => {
    const seen: unknown[] = [];
    const failure = new Error('ProvisionedThroughputExceededException');
    const answer = await handleStatusRequest(
      'GET',
      '/deliveries/order-42',
      () => Promise.reject(failure),
      (error) => seen.push(error),
    );
    expect(answer.statusCode).toBe(503);
    expect(seen).toEqual([failure]);
  });
});

describe('lookupTargetFromOutputs', () => {
  test('takes the tables and the key prefix from the outputs', () => {
    expect(
      lookupTargetFromOutputs(
        { LedgerTableName: 'ledger', TableName: 'idem', IdempotencyKeyPrefix: 'email-pipeline', TopicArn: 'x' },
        'Stack Mail',
      ),
    ).toEqual({ ledgerTableName: 'ledger', idempotencyTableName: 'idem', keyPrefix: 'email-pipeline' });
  });

  test('names every missing output and the source', () => {
    expect(() => lookupTargetFromOutputs({ TableName: 'idem' }, 'Stack Mail')).toThrow(
      'Stack Mail has no LedgerTableName, IdempotencyKeyPrefix outputs: it predates the send ledger',
    );
  });
});

describe('formatReport', () => {
  test('shows the status, the SES message and the timeline, oldest first as given', () => {
    const text = formatReport({
      key: 'order-42',
      status: 'bounced',
      sesMessageId: 'ses-1',
      updatedAt: '2026-12-01T10:00:02.000Z',
      events: [
        { type: 'Send', at: '2026-12-01T10:00:00.000Z' },
        { type: 'Bounce', at: '2026-12-01T10:00:02.000Z', detail: 'Permanent/General' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'order-42: bounced (the email bounced)',
      '  SES message  ses-1',
      '  updated      2026-12-01T10:00:02.000Z',
      '  events',
      '    2026-12-01T10:00:00.000Z  Send',
      '    2026-12-01T10:00:02.000Z  Bounce  Permanent/General',
    ]);
  });

  test('an unknown key says what unknown can mean', () => {
    expect(formatReport({ key: 'nope', status: 'unknown', events: [] })).toBe(
      'nope: unknown (nothing is recorded for this key: never published, not claimed yet, or past the dedupe window)',
    );
  });
});
