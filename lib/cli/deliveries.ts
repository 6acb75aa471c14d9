/**
 * `email-pipeline deliveries` without the process around it: which outcomes can be asked for,
 * what `--since` means, and the query of the ledger's index by outcome (LEDGER_STATUS_INDEX):
 * one Query per shard, newest first, merged; and the teams of the listed keys.
 *
 * The index is keys only and stays so: a key's team (the item's `team`, `teamKey`) is read from
 * the items the index lists, by BatchGetItem. Projecting `team` into the index instead would spare
 * that read, but CloudFormation cannot change an index's projection in place: an upgrade would
 * delete the index and build it again (`deliveries` fails meanwhile, and every stack's upgrade
 * needs an index build). The read costs only the operator who runs `deliveries` on a pipeline with
 * teams; the ledger's writes, and so the cost per email, stay what they were.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BATCH_GET_KEYS, batchGetAll } from './batch-get';
import {
  LEDGER_STATUS_INDEX,
  LEDGER_STATUSES,
  INDEXED_OUTCOMES,
  LEDGER_TABLE,
  LEDGER_TEAM,
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
  /** The key's team, when its ledger item names one (read when the query asks for teams). */
  readonly team?: string;
  /** The key as its team's publisher wrote it (`order-42`), when the item has it. */
  readonly teamKey?: string;
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
  /** Only this team's keys (a key whose item names no team is never listed). */
  readonly team?: string;
  /** Name each listed key's team, read from its item (implied by `team`). */
  readonly teams?: boolean;
}

type Db = Pick<DynamoDBDocumentClient, 'send'>;

/** `deliveries` with the teams of their ledger items (`team`, `teamKey`), read together (BatchGetItem). */
async function withTeams(db: Db, tableName: string, found: readonly Delivery[]): Promise<Delivery[]> {
  const { partitionKey } = LEDGER_TABLE;
  const keys = [...new Set(found.map((d) => d.key))].map((key) => ({ [partitionKey]: key }));
  const items = await batchGetAll(db, tableName, keys, {
    label: 'ledger table',
    attributes: [partitionKey, LEDGER_TEAM.team, LEDGER_TEAM.teamKey],
  });
  const teams = new Map(items.map((item) => [String(item[partitionKey]), item]));
  return found.map((delivery) => {
    const item = teams.get(delivery.key);
    const [named, own] = [item?.[LEDGER_TEAM.team], item?.[LEDGER_TEAM.teamKey]];
    const team = typeof named === 'string' ? named : undefined;
    const teamKey = team !== undefined && typeof own === 'string' ? own : undefined;
    return { ...delivery, ...(team !== undefined ? { team } : {}), ...(teamKey !== undefined ? { teamKey } : {}) };
  });
}

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
        // A team's keys are told apart by reading their items: a page at a time, one BatchGetItem each.
        Limit: query.team !== undefined ? BATCH_GET_KEYS : Math.min(1000, query.max - out.length),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const listed: Delivery[] = (page.Items ?? []).map((item) => ({
      key: String(item[LEDGER_TABLE.partitionKey]),
      status: query.status,
      updatedAt: String(item[LEDGER_STATUS_INDEX.sortKey]),
    }));
    const { team } = query;
    out.push(
      ...(team === undefined
        ? listed
        : (await withTeams(db, query.ledgerTableName, listed)).filter((delivery) => delivery.team === team)),
    );
    start = page.LastEvaluatedKey;
  } while (start && out.length < query.max);
  return out.slice(0, query.max);
}

/**
 * The newest `max` keys with the outcome, newest first (the index is eventually consistent: a
 * second or so behind); only `team`'s, or each with its team when `teams`. A team's keys are read
 * page by page from the index, each page's items read for their team, until `max` are found.
 */
export async function queryDeliveries(db: Db, query: DeliveriesQuery): Promise<Delivery[]> {
  const shards = Array.from({ length: LEDGER_STATUS_INDEX.shards }, (_, i) => i);
  const lists = await Promise.all(shards.map((shard) => queryShard(db, query, shard)));
  const found = newest(lists, query.max);
  return query.teams && query.team === undefined ? withTeams(db, query.ledgerTableName, found) : found;
}
