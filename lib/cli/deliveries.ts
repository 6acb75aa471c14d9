/**
 * `email-pipeline deliveries` without the process around it: which outcomes can be asked for,
 * what `--since` means, and the query of the ledger's index by outcome (LEDGER_STATUS_INDEX):
 * one Query per shard, newest first, merged.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  LEDGER_STATUS_INDEX,
  LEDGER_STATUSES,
  INDEXED_OUTCOMES,
  LEDGER_TABLE,
  type IndexedOutcome,
} from '../../lambdas/kernel/ledger/schema';

/**
 * The outcomes the index files keys under (INDEXED_OUTCOMES: what operators list); `sent` and
 * `delivered`, the outcome of nearly every email, are not indexed (one key's: email-pipeline status).
 */
export const OUTCOMES: readonly IndexedOutcome[] = INDEXED_OUTCOMES;

/** The outcomes a key may have that the index does not file (asked for, they get a clear refusal). */
export const UNINDEXED_OUTCOMES: readonly string[] = LEDGER_STATUSES.filter((s) => !INDEXED_OUTCOMES.includes(s));

export function isOutcome(value: string): value is IndexedOutcome {
  return (OUTCOMES as readonly string[]).includes(value);
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * The ISO 8601 time `--since` names: an ISO date or time (`2026-12-03`, `2026-12-03T08:00:00Z`) or
 * an age (`30m`, `2h`, `7d`) back from `now`. Undefined when the text is neither.
 */
export function sinceTime(text: string, now: number): string | undefined {
  const age = /^([0-9]+)([smhd])$/.exec(text);
  if (age) return new Date(now - Number(age[1]) * (UNIT_SECONDS[age[2] ?? 's'] ?? 1) * 1000).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** One key the index holds under an outcome. */
export interface Delivery {
  /** The ledger key: the dedupe key itself, or `sha256-<hex>` of a key SES cannot take as a tag. */
  readonly key: string;
  readonly status: IndexedOutcome;
  readonly updatedAt: string;
}

/** The newest `max` of several newest-first lists. */
export function newest(lists: readonly (readonly Delivery[])[], max: number): Delivery[] {
  return lists
    .flat()
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.key < b.key ? -1 : 1))
    .slice(0, max);
}

export interface DeliveriesQuery {
  readonly ledgerTableName: string;
  readonly status: IndexedOutcome;
  /** ISO 8601: only keys updated at or after it. */
  readonly since?: string;
  readonly max: number;
}

type Db = Pick<DynamoDBDocumentClient, 'send'>;

async function queryShard(db: Db, query: DeliveriesQuery, shard: number): Promise<Delivery[]> {
  const out: Delivery[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: query.ledgerTableName,
        IndexName: LEDGER_STATUS_INDEX.indexName,
        KeyConditionExpression: query.since ? '#pk = :pk AND #sk >= :since' : '#pk = :pk',
        ExpressionAttributeNames: {
          '#pk': LEDGER_STATUS_INDEX.partitionKey,
          ...(query.since ? { '#sk': LEDGER_STATUS_INDEX.sortKey } : {}),
        },
        ExpressionAttributeValues: {
          ':pk': `${query.status}#${shard}`,
          ...(query.since ? { ':since': query.since } : {}),
        },
        ScanIndexForward: false,
        Limit: Math.min(1000, query.max - out.length),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      out.push({
        key: String(item[LEDGER_TABLE.partitionKey]),
        status: query.status,
        updatedAt: String(item[LEDGER_STATUS_INDEX.sortKey]),
      });
    }
    start = page.LastEvaluatedKey;
  } while (start && out.length < query.max);
  return out;
}

/** The newest `max` keys with the outcome, newest first (the index is eventually consistent: a second or so behind). */
export async function queryDeliveries(db: Db, query: DeliveriesQuery): Promise<Delivery[]> {
  const shards = Array.from({ length: LEDGER_STATUS_INDEX.shards }, (_, i) => i);
  const lists = await Promise.all(shards.map((shard) => queryShard(db, query, shard)));
  return newest(lists, query.max);
}
