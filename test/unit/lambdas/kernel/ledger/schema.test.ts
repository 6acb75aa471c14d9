/** The ledger's schema: a key's ledger key, which outcomes the status index files, its shards, and shown events. */
import {
  HASHED_KEY_PREFIX,
  INDEXED_OUTCOMES,
  isIndexed,
  LEDGER_STATUS_INDEX,
  ledgerKey,
  shownEvent,
  statusShard,
} from '../../../../../lambdas/kernel/ledger/schema';

describe('ledgerKey', () => {
  test('a key SES takes as a tag value is its own ledger key', () => {
    expect(ledgerKey('order-42_a')).toBe('order-42_a');
    expect(ledgerKey('x'.repeat(256))).toBe('x'.repeat(256));
  });

  test.each(['order.42', 'a b', 'ü', 'x'.repeat(257), ''])('%j is hashed', (key) => {
    expect(ledgerKey(key)).toMatch(/^sha256-[0-9a-f]{64}$/);
  });

  test('one to one: a key that looks like a hash is hashed too, so it never meets the key it could stand for', () => {
    const hashed = ledgerKey('order.1');
    expect(hashed.startsWith(HASHED_KEY_PREFIX)).toBe(true);
    expect(ledgerKey(hashed)).not.toBe(hashed);
    expect(ledgerKey(hashed)).toMatch(/^sha256-[0-9a-f]{64}$/);
  });

  test('distinct keys, distinct ledger keys', () => {
    expect(ledgerKey('order.1')).not.toBe(ledgerKey('order.2'));
  });
});

describe('the status index', () => {
  test('sent and delivered are not filed; dead-lettered is', () => {
    expect(isIndexed('delivered')).toBe(false);
    expect(isIndexed('sent')).toBe(false);
    expect(isIndexed('dead-lettered')).toBe(true);
    expect(INDEXED_OUTCOMES.every(isIndexed)).toBe(true);
  });

  test('a key has one shard per outcome, stable, within the shard count', () => {
    const shard = statusShard('order-42', 'bounced');
    expect(statusShard('order-42', 'bounced')).toBe(shard);
    expect(shard).toMatch(/^bounced#\d+$/);
    const shards = new Set(
      Array.from({ length: 200 }, (_, i) => Number(statusShard(`order-${i}`, 'bounced').split('#')[1])),
    );
    expect([...shards].sort()).toEqual(Array.from({ length: LEDGER_STATUS_INDEX.shards }, (_, i) => i));
  });
});

test('an event is shown without its attempt id, and unchanged otherwise', () => {
  const event = { type: 'Delivery', at: '2026-12-01T10:00:00.000Z', sesMessageId: 'm-1' };
  expect(shownEvent({ ...event, attemptId: 'a-1' })).toEqual(event);
  expect(shownEvent(event)).toBe(event);
});
