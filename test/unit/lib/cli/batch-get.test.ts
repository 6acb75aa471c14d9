/**
 * The CLI's BatchGetItem reads: 100 keys a request, a projection when attributes are named, the
 * keys DynamoDB leaves unprocessed asked again after a wait, and an OperationError after five rounds.
 */
import { batchGetAll } from '../../../../lib/cli/batch-get';
import { OperationError } from '../../../../lib/cli/errors';

interface Asked {
  readonly Keys: Record<string, unknown>[];
  readonly ProjectionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
}

/** A client whose answer to each BatchGet is `answer(asked keys, request number)`; it keeps what it was asked. */
function client(answer: (asked: Asked, n: number) => unknown) {
  const asked: Asked[] = [];
  const db = {
    send: async (command: { input: { RequestItems: Record<string, Asked> } }) => {
      const one = command.input.RequestItems.t as Asked;
      asked.push(one);
      return answer(one, asked.length);
    },
  } as never;
  return { db, asked };
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}` }));

test('250 keys are read 100 a request, and every item found is returned', async () => {
  const { db, asked } = client((one) => ({ Responses: { t: one.Keys.map((k) => ({ ...k, team: 'billing' })) } }));
  const items = await batchGetAll(db, 't', keys(250), { label: 'ledger table' });
  expect(asked.map((a) => a.Keys.length)).toEqual([100, 100, 50]);
  expect(items).toHaveLength(250);
  expect(new Set(items.map((i) => i.key)).size).toBe(250);
  expect(asked[0]?.ProjectionExpression).toBeUndefined();
});

test('named attributes are read alone, through placeholders', async () => {
  const { db, asked } = client(() => ({ Responses: { t: [] } }));
  await batchGetAll(db, 't', keys(1), { label: 'ledger table', attributes: ['key', 'team'] });
  expect(asked[0]).toMatchObject({
    ProjectionExpression: '#a0, #a1',
    ExpressionAttributeNames: { '#a0': 'key', '#a1': 'team' },
  });
});

test('unprocessed keys are asked again after a wait, and after five rounds the read gives up', async () => {
  const waits: number[] = [];
  const backoffMs = (round: number) => {
    waits.push(round);
    return 0;
  };
  const slow = client((one, n) =>
    n === 1
      ? { Responses: { t: [one.Keys[0]] }, UnprocessedKeys: { t: { Keys: one.Keys.slice(1) } } }
      : { Responses: { t: one.Keys } },
  );
  const items = await batchGetAll(slow.db, 't', keys(3), { label: 'ledger table', backoffMs });
  expect(items.map((i) => i.key).sort()).toEqual(['k0', 'k1', 'k2']);
  expect(slow.asked.map((a) => a.Keys.map((k) => k.key))).toEqual([
    ['k0', 'k1', 'k2'],
    ['k1', 'k2'],
  ]);
  expect(waits).toEqual([1]);

  const stuck = client((one) => ({ Responses: { t: [] }, UnprocessedKeys: { t: { Keys: one.Keys } } }));
  const read = batchGetAll(stuck.db, 't', keys(2), { label: 'ledger table', backoffMs });
  await expect(read).rejects.toThrow(
    new OperationError('DynamoDB kept leaving keys of the ledger table unread: try again.'),
  );
  expect(stuck.asked).toHaveLength(5);
});
