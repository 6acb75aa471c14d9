import { dedupeTagValue } from '../../../../lambdas/send-email/send/email';
/**
 * The status lookup's pure parts: key rules, the idempotency record id (checked
 * against Powertools itself) and the request the lookup makes. The HTTP routing
 * has its tests in http.test.ts; the CLI's target and text, in lib/cli/status-report.test.ts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import {
  idempotencyRecordId,
  InvalidKeyError,
  InvalidTeamError,
  keyProblem,
  lookupDelivery,
} from '../../../../lambdas/status/lookup';

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

describe('lookupDelivery of a team’s key', () => {
  function recordingDb() {
    const inputs: unknown[] = [];
    return { inputs, db: { send: async (command: { input: unknown }) => (inputs.push(command.input), {}) } };
  }
  const target = { ledgerTableName: 'Ledger', idempotencyTableName: 'Idem', keyPrefix: 'email-pipeline' };

  test('reads the key in the team’s namespace, as the send function claims and tags it, and reports it so', async () => {
    const { inputs, db } = recordingDb();
    const report = await lookupDelivery({ ...target, db: db as never }, 'order-42', 'billing');
    expect(inputs).toEqual([
      { TableName: 'Ledger', Key: { key: dedupeTagValue('billing#order-42') } },
      { TableName: 'Idem', Key: { id: idempotencyRecordId('email-pipeline', 'billing#order-42') } },
    ]);
    expect(report.key).toBe('billing#order-42');
  });

  test('two teams’ same key are two lookups; without a team, the bare key', async () => {
    const ids = async (team?: string) => {
      const { inputs, db } = recordingDb();
      await lookupDelivery({ ...target, db: db as never }, 'order-42', team);
      return inputs;
    };
    const [billing, security, bare] = await Promise.all([ids('billing'), ids('security'), ids()]);
    expect(new Set([JSON.stringify(billing), JSON.stringify(security), JSON.stringify(bare)]).size).toBe(3);
  });

  test('a team name that cannot be one is refused before reading anything', async () => {
    const db = { send: () => Promise.reject(new Error('must not be called')) };
    await expect(lookupDelivery({ ...target, db: db as never }, 'order-42', 'Billing#x')).rejects.toThrow(
      InvalidTeamError,
    );
  });
});
