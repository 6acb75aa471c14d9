/**
 * `email-pipeline deliveries`: its pure parts (--since, the outcomes, merging the shards' lists),
 * the ledger's index partition of a key (stable, spread over the shards), and the query against a
 * ledger in this process: --team lists one team's keys (read page by page), keys name their teams.
 */
import { UNINDEXED_OUTCOMES } from '../../../../lib/cli/deliveries';
import { LEDGER_STATUS_INDEX, statusShard } from '../../../../lambdas/kernel/ledger/schema';
import { newest, OUTCOMES, queryDeliveries, sinceTime } from '../../../../lib/cli/deliveries';

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

/**
 * A ledger of keys under one outcome: the index (Query, newest first per shard, in pages of the
 * asked Limit) and the items' teams (BatchGet); it counts the requests of each kind.
 */
function ledger(items: { key: string; updatedAt: string; team?: string; teamKey?: string }[]) {
  const counts = { query: 0, batchGet: 0 };
  const db = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const input = command.input as {
        ExpressionAttributeValues?: Record<string, string>;
        Limit?: number;
        ExclusiveStartKey?: { n: number };
        RequestItems?: Record<string, { Keys: { key: string }[] }>;
      };
      if (command.constructor.name === 'QueryCommand') {
        counts.query += 1;
        const shard = input.ExpressionAttributeValues?.[':pk'] ?? '';
        const all = items
          .filter((i) => statusShard(i.key, 'bounced') === shard)
          .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));
        const from = input.ExclusiveStartKey?.n ?? 0;
        const to = from + (input.Limit ?? all.length);
        return {
          Items: all.slice(from, to).map((i) => ({ key: i.key, updatedAt: i.updatedAt, statusShard: shard })),
          ...(to < all.length ? { LastEvaluatedKey: { n: to } } : {}),
        };
      }
      counts.batchGet += 1;
      const asked = new Set((input.RequestItems?.ledger?.Keys ?? []).map((k) => k.key));
      const found = items.filter((i) => asked.has(i.key)).map(({ key, team, teamKey }) => ({ key, team, teamKey }));
      return { Responses: { ledger: found } };
    },
  } as never;
  return { db, counts };
}

const at = (n: number) => new Date(Date.UTC(2026, 11, 3, 9, 0, n)).toISOString();

test("--team lists only that team's keys, newest first, as the team wrote them, reading the index page by page", async () => {
  // 1,200 keys (several index pages a shard): every third billing's, the others security's or of no team.
  type Item = { key: string; updatedAt: string; team?: string; teamKey?: string };
  const items = Array.from({ length: 1200 }, (_, i): Item => ({
    key: `sha256-${i}`,
    updatedAt: at(i),
    ...(i % 3 === 0 ? { team: 'billing', teamKey: `order-${i}` } : i % 3 === 1 ? { team: 'security' } : {}),
  }));
  const { db, counts } = ledger(items);
  const query = { ledgerTableName: 'ledger', status: 'bounced' as const, max: 50, team: 'billing' };
  const found = await queryDeliveries(db, query);
  expect(found).toHaveLength(50);
  expect(found.every((d) => d.team === 'billing' && d.teamKey === `order-${d.key.slice(7)}`)).toBe(true);
  expect(found.map((d) => d.updatedAt)).toEqual([...found.map((d) => d.updatedAt)].sort().reverse());
  expect(found[0]).toEqual({
    key: 'sha256-1197',
    status: 'bounced',
    updatedAt: at(1197),
    team: 'billing',
    teamKey: 'order-1197',
  });
  // Every billing key is listed when --max allows, and nothing else.
  const all = await queryDeliveries(db, { ...query, max: 1000 });
  expect(all.map((d) => d.key).sort()).toEqual(
    items
      .filter((i) => i.team === 'billing')
      .map((i) => i.key)
      .sort(),
  );
  expect(counts.batchGet).toBeGreaterThan(0);
});

test('a key with no team is never listed under --team; without --team every key is, each with its team when asked', async () => {
  const items = [
    { key: 'order-1', updatedAt: at(1) },
    { key: 'sha256-aa', updatedAt: at(2), team: 'billing', teamKey: 'order-1' },
    { key: 'sha256-bb', updatedAt: at(3), team: 'billing' },
  ];
  const { db, counts } = ledger(items);
  const base = { ledgerTableName: 'ledger', status: 'bounced' as const, max: 10 };
  expect((await queryDeliveries(db, { ...base, team: 'security' })).map((d) => d.key)).toEqual([]);
  expect((await queryDeliveries(db, { ...base, team: 'billing' })).map((d) => d.key)).toEqual([
    'sha256-bb',
    'sha256-aa',
  ]);

  counts.batchGet = 0;
  const plain = await queryDeliveries(db, base);
  expect(plain.map((d) => d.key)).toEqual(['sha256-bb', 'sha256-aa', 'order-1']);
  expect(plain.some((d) => d.team !== undefined)).toBe(false);
  expect(counts.batchGet).toBe(0);

  const named = await queryDeliveries(db, { ...base, teams: true });
  expect(named).toEqual([
    { key: 'sha256-bb', status: 'bounced', updatedAt: at(3), team: 'billing' },
    { key: 'sha256-aa', status: 'bounced', updatedAt: at(2), team: 'billing', teamKey: 'order-1' },
    { key: 'order-1', status: 'bounced', updatedAt: at(1) },
  ]);
  expect(counts.batchGet).toBe(1);
});
