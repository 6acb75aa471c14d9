/**
 * `email-pipeline deliveries`: its pure parts (--since, the outcomes, merging the shards' lists)
 * and the ledger's index partition of a key (stable, spread over the shards).
 */
import { UNINDEXED_OUTCOMES } from '../../../../lib/cli/deliveries';
import { LEDGER_STATUS_INDEX, statusShard } from '../../../../lambdas/kernel/ledger/schema';
import { newest, OUTCOMES, sinceTime } from '../../../../lib/cli/deliveries';

const NOW = Date.parse('2026-12-03T10:00:00.000Z');

test('--since takes an age back from now or an ISO date or time, nothing else', () => {
  expect(sinceTime('30m', NOW)).toBe('2026-12-03T09:30:00.000Z');
  expect(sinceTime('2h', NOW)).toBe('2026-12-03T08:00:00.000Z');
  expect(sinceTime('7d', NOW)).toBe('2026-11-26T10:00:00.000Z');
  expect(sinceTime('45s', NOW)).toBe('2026-12-03T09:59:15.000Z');
  expect(sinceTime('2026-12-01', NOW)).toBe('2026-12-01T00:00:00.000Z');
  expect(sinceTime('2026-12-01T08:00:00+01:00', NOW)).toBe('2026-12-01T07:00:00.000Z');
  for (const bad of ['yesterday', '2h30m', '-1h', '2026-13-45', '', '12']) expect(sinceTime(bad, NOW)).toBeUndefined();
});

test('the outcomes listed are the ones operators act on; sent and delivered are not indexed', () => {
  expect(OUTCOMES).toEqual(['delayed', 'bounced', 'complained', 'rejected', 'dead-lettered', 'scheduled', 'cancelled']);
  expect(UNINDEXED_OUTCOMES).toEqual(['sent', 'delivered']);
});

test('the shards are merged newest first and cut at max', () => {
  const d = (key: string, updatedAt: string) => ({ key, status: 'bounced' as const, updatedAt });
  const merged = newest(
    [
      [d('a', '2026-12-03T09:00:00Z'), d('b', '2026-12-03T07:00:00Z')],
      [d('c', '2026-12-03T08:00:00Z')],
      [],
      [d('e', '2026-12-03T09:30:00Z')],
    ],
    3,
  );
  expect(merged.map((x) => x.key)).toEqual(['e', 'a', 'c']);
});

test('a key stays in one shard per outcome, and keys spread over every shard', () => {
  expect(statusShard('order-42', 'sent')).toBe(statusShard('order-42', 'sent'));
  expect(statusShard('order-42', 'delivered').replace('delivered', 'sent')).toBe(statusShard('order-42', 'sent'));
  expect(statusShard('order-42', 'dead-lettered')).toMatch(/^dead-lettered#[0-3]$/);
  const shards = new Set(Array.from({ length: 200 }, (_, i) => statusShard(`order-${i}`, 'sent')));
  expect(shards.size).toBe(LEDGER_STATUS_INDEX.shards);
});
