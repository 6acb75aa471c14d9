import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { IdempotencyConfig, IdempotencyRecordStatus } from '@aws-lambda-powertools/idempotency';
import { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { cancelMarkOf } from '../../../../lambdas/kernel/ledger/cancel-mark';
import { ledgerKey } from '../../../../lambdas/kernel/ledger/schema';
import { LedgerAwarePersistenceLayer } from '../../../../lambdas/send-email/claim/persistence';
import { cancelDelivery, type CancelDeps } from '../../../../lambdas/status/cancel';
import { handleCancelRequest, handleStatusRequest } from '../../../../lambdas/status/http';
import { idempotencyRecordId, lookupDelivery } from '../../../../lambdas/status/lookup';

const NOW = Date.UTC(2026, 11, 24, 8, 0, 0);
const BY = 'arn:aws:iam::123456789012:role/ops';
const ID = idempotencyRecordId('email-pipeline', 'order-42');

/** The idempotency table as a map, PutItem's condition as the cancel writes it, GetItem by id. */
function tables(records: Record<string, Record<string, unknown>> = {}) {
  const idempotency = new Map(Object.entries(records));
  const ledgerWrites: UpdateItemCommand[] = [];
  const db = {
    send: async (command: unknown) => {
      if (command instanceof PutCommand) {
        const item = command.input.Item as Record<string, unknown>;
        const old = idempotency.get(item.id as string);
        // attribute_not_exists(#id) OR #expiry < :now
        if (old && !((old.expiration as number) < NOW / 1000)) {
          throw Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
        }
        idempotency.set(item.id as string, item);
        return {};
      }
      if (command instanceof GetCommand) {
        const key = command.input.Key as Record<string, string>;
        return { Item: command.input.TableName === 'Idem' ? idempotency.get(key.id ?? '') : undefined };
      }
      throw new Error('unexpected command');
    },
  };
  const dynamodb = {
    send: async (command: unknown) => {
      if (command instanceof UpdateItemCommand) ledgerWrites.push(command);
      return {};
    },
  };
  const deps: CancelDeps = {
    db: db as unknown as CancelDeps['db'],
    dynamodb: dynamodb as unknown as CancelDeps['dynamodb'],
    ledgerTableName: 'Ledger',
    idempotencyTableName: 'Idem',
    keyPrefix: 'email-pipeline',
    dedupeWindowSeconds: 1000,
    now: () => NOW,
  };
  return { deps, idempotency, ledgerWrites };
}

const sent = {
  id: ID,
  status: 'COMPLETED',
  expiration: NOW / 1000 + 500,
  data: { sesMessageId: 'ses-1', sentAt: 'x' },
};
const inProgress = { id: ID, status: 'INPROGRESS', expiration: NOW / 1000 + 500, in_progress_expiration: NOW - 1 };

describe('cancel: the state machine', () => {
  test('a key with no record is cancelled: a COMPLETED cancel mark, by whom and when, for the dedupe window', async () => {
    const { deps, idempotency } = tables();
    const result = await cancelDelivery(deps, 'order-42', BY);
    expect(result.outcome).toBe('cancelled');
    expect(idempotency.get(ID)).toEqual({
      id: ID,
      status: 'COMPLETED',
      expiration: NOW / 1000 + 1000,
      data: { cancelled: true, cancelledAt: '2026-12-24T08:00:00.000Z', cancelledBy: BY },
      ledgerKey: 'order-42',
    });
    expect(result.report).toMatchObject({ key: 'order-42', status: 'cancelled' });
    expect(result.report.events).toEqual([{ type: 'Cancelled', at: '2026-12-24T08:00:00.000Z', detail: `by ${BY}` }]);
  });

  test('the ledger records Cancelled over nothing or over scheduled only, never over an SES status', async () => {
    const { deps, ledgerWrites } = tables();
    await cancelDelivery(deps, 'order-42', BY);
    const input = ledgerWrites[0]?.input;
    expect(input?.TableName).toBe('Ledger');
    expect(input?.ConditionExpression).toBe('attribute_not_exists(#status) OR #status = :over0');
    const values = unmarshall(input?.ExpressionAttributeValues ?? {});
    expect(values).toMatchObject({ ':status': 'cancelled', ':over0': 'scheduled', ':event': [{ type: 'Cancelled' }] });
  });

  test("a team's cancel names the team, and the key as the team wrote it, on the ledger item; a bare key names none", async () => {
    const teamed = tables();
    await cancelDelivery(teamed.deps, 'order-42', BY, 'billing');
    const input = teamed.ledgerWrites[0]?.input;
    expect(input?.Key).toEqual({ key: { S: ledgerKey('billing#order-42') } });
    expect(input?.UpdateExpression).toContain('#team = if_not_exists(#team, :team)');
    expect(unmarshall(input?.ExpressionAttributeValues ?? {})).toMatchObject({
      ':team': 'billing',
      ':teamKey': 'order-42',
    });

    const bare = tables();
    await cancelDelivery(bare.deps, 'order-42', BY);
    expect(bare.ledgerWrites[0]?.input.UpdateExpression).not.toContain('team');
  });

  test('cancelling twice is harmless: the second finds the mark, changes nothing and answers already-cancelled', async () => {
    const { deps, idempotency, ledgerWrites } = tables();
    await cancelDelivery(deps, 'order-42', BY);
    const mark = idempotency.get(ID);
    const second = await cancelDelivery({ ...deps, now: () => NOW + 5000 }, 'order-42', 'someone-else');
    expect(second.outcome).toBe('already-cancelled');
    expect(second.report.status).toBe('cancelled');
    expect(idempotency.get(ID)).toBe(mark);
    expect(ledgerWrites).toHaveLength(1);
  });

  test('a key already sent is too late: nothing is written, and the report says sent', async () => {
    const { deps, idempotency, ledgerWrites } = tables({ [ID]: sent });
    const result = await cancelDelivery(deps, 'order-42', BY);
    expect(result.outcome).toBe('too-late');
    expect(result.report.status).toBe('sent');
    expect(idempotency.get(ID)).toBe(sent);
    expect(ledgerWrites).toHaveLength(0);
  });

  test('a key in progress (even past its in-progress expiry: it may have sent) is too late', async () => {
    const { deps, idempotency } = tables({ [ID]: inProgress });
    const result = await cancelDelivery(deps, 'order-42', BY);
    expect(result.outcome).toBe('too-late');
    expect(result.report.status).toBe('in-progress');
    expect(idempotency.get(ID)).toBe(inProgress);
  });

  test('a record past the dedupe window counts as none: the key is cancelled', async () => {
    const { deps } = tables({ [ID]: { ...sent, expiration: NOW / 1000 - 1 } });
    expect((await cancelDelivery(deps, 'order-42', BY)).outcome).toBe('cancelled');
  });

  test('the mark is written under the id Powertools gives the key (Unicode NFC, as the send function)', async () => {
    const { deps, idempotency } = tables();
    await cancelDelivery(deps, 'cafe\u0301-42', BY);
    expect(idempotency.has(idempotencyRecordId('email-pipeline', 'caf\u00e9-42'))).toBe(true);
  });

  test("a team's cancel marks <team>#<key>, under that key's own id; the bare key stays free", async () => {
    const { deps, idempotency } = tables();
    const result = await cancelDelivery(deps, 'order-42', BY, 'billing');
    const teamId = idempotencyRecordId('email-pipeline', 'billing#order-42');
    expect(idempotency.get(teamId)).toMatchObject({ status: 'COMPLETED', ledgerKey: ledgerKey('billing#order-42') });
    expect(idempotency.has(ID)).toBe(false);
    expect(result.report).toMatchObject({ key: 'billing#order-42', status: 'cancelled' });
    // The other team's and the bare key's cancels are their own: the first is not "already" theirs.
    expect((await cancelDelivery(deps, 'order-42', BY, 'security')).outcome).toBe('cancelled');
    expect((await cancelDelivery(deps, 'order-42', BY)).outcome).toBe('cancelled');
    expect(idempotency.size).toBe(3);
  });

  test('a team that cannot be a team is refused before anything is written', async () => {
    const { deps, idempotency } = tables();
    await expect(cancelDelivery(deps, 'order-42', BY, 'Billing')).rejects.toThrow('Invalid team "Billing"');
    expect(idempotency.size).toBe(0);
  });

  test('a key that cannot be a dedupe key is refused before anything is written', async () => {
    const { deps, idempotency } = tables();
    await expect(cancelDelivery(deps, ' order', BY)).rejects.toThrow('Invalid key');
    expect(idempotency.size).toBe(0);
  });

  test('the status reads cancelled from the mark alone when the ledger has nothing (its write failed)', async () => {
    const { deps } = tables({
      [ID]: { id: ID, status: 'COMPLETED', expiration: NOW / 1000 + 9, data: cancelMark() },
    });
    const report = await lookupDelivery(deps, 'order-42');
    expect(report.status).toBe('cancelled');
  });
});

function cancelMark() {
  return { cancelled: true, cancelledAt: '2026-12-24T07:00:00.000Z', cancelledBy: BY };
}

describe('cancel: the send side meets the mark', () => {
  const layer = new LedgerAwarePersistenceLayer({
    tableName: 'Idem',
    awsSdkV3Client: new DynamoDBClient({ region: 'us-east-1' }),
    keyPrefix: 'email-pipeline',
  });
  layer.configure({
    config: new IdempotencyConfig({ eventKeyJmesPath: 'key', payloadValidationJmesPath: 'email' }),
    keyPrefix: 'email-pipeline',
  });
  const data = { key: 'order-42', email: { to: ['a@example.com'], subject: 's', text: 't' } };

  test('a copy meeting a cancel mark is taken as a completed record whatever its content (no payload hash)', () => {
    const mark = new IdempotencyRecord({
      idempotencyKey: ID,
      status: IdempotencyRecordStatus.COMPLETED,
      responseData: cancelMark(),
    });
    expect(layer.processExistingRecord(mark, data)).toBe(mark);
    expect(cancelMarkOf(mark.getResponse())).toEqual(cancelMark());
  });

  test('any other record with another payload is still refused (same key, other content)', () => {
    const other = new IdempotencyRecord({
      idempotencyKey: ID,
      status: IdempotencyRecordStatus.COMPLETED,
      responseData: { sesMessageId: 'ses-1' },
      payloadHash: 'another',
    });
    expect(() => layer.processExistingRecord(other, data)).toThrow('Payload does not match');
  });

  test('a mark must say cancelled, when and by whom: a result that only looks like one is not a mark', () => {
    expect(cancelMarkOf({ cancelled: 'true', cancelledAt: 'x', cancelledBy: 'y' })).toBeUndefined();
    expect(cancelMarkOf({ sesMessageId: 'ses-1' })).toBeUndefined();
    expect(cancelMarkOf(null)).toBeUndefined();
  });
});

describe('DELETE /deliveries/{key} at the cancel URL', () => {
  const lookup = async (key: string) => ({ key, status: 'sent' as const, events: [] });
  const cancel = (outcome: 'cancelled' | 'already-cancelled' | 'too-late') => async (key: string) => ({
    outcome,
    report: { key, status: outcome === 'too-late' ? ('sent' as const) : ('cancelled' as const), events: [] },
  });

  test('answers 200 with the outcome and the report when cancelled, now or already', async () => {
    for (const outcome of ['cancelled', 'already-cancelled'] as const) {
      const answer = await handleCancelRequest('DELETE', '/deliveries/order-42', cancel(outcome));
      expect(answer.statusCode).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ outcome, report: { key: 'order-42', status: 'cancelled' } });
    }
  });

  test('answers 409 with the status when it is too late (sent or in progress)', async () => {
    const answer = await handleCancelRequest('DELETE', '/deliveries/order-42', cancel('too-late'));
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body)).toMatchObject({ outcome: 'too-late', report: { status: 'sent' } });
  });

  test("?team=NAME cancels that team's key; a bad team answers 400 and cancels nothing", async () => {
    const asked: [string, string | undefined][] = [];
    const answer = await handleCancelRequest('DELETE', '/deliveries/order-42?team=security', async (key, team) => {
      asked.push([key, team]);
      return cancel('cancelled')(key);
    });
    expect(answer.statusCode).toBe(200);
    expect(asked).toEqual([['order-42', 'security']]);
    const { deps, idempotency } = tables();
    const bad = await handleCancelRequest('DELETE', '/deliveries/order-42?team=-x', (key, team) =>
      cancelDelivery(deps, key, BY, team),
    );
    expect(bad.statusCode).toBe(400);
    expect(idempotency.size).toBe(0);
  });

  test('the key is percent-decoded as for GET', async () => {
    const answer = await handleCancelRequest('DELETE', '/deliveries/order%2F42', cancel('cancelled'));
    expect(JSON.parse(answer.body).report.key).toBe('order/42');
  });

  test('the cancel URL takes DELETE only: a GET or PUT is 405 and cancels nothing', async () => {
    let cancelled = 0;
    const counting = async (key: string) => {
      cancelled += 1;
      return cancel('cancelled')(key);
    };
    for (const method of ['GET', 'PUT', 'POST']) {
      const answer = await handleCancelRequest(method, '/deliveries/order-42', counting);
      expect(answer.statusCode).toBe(405);
      expect(answer.headers.allow).toBe('DELETE');
    }
    expect(cancelled).toBe(0);
  });

  test('the status URL refuses a DELETE (405), whoever sends it, and says where cancels go', async () => {
    const answer = await handleStatusRequest('DELETE', '/deliveries/order-42', lookup);
    expect(answer.statusCode).toBe(405);
    expect(answer.headers.allow).toBe('GET');
    expect(JSON.parse(answer.body).message).toContain('CancelUrl');
  });
});
