/**
 * The ledger table's reads and writes. Recording an event is one conditional UpdateItem when
 * events arrive in order (the usual case: it appends to the timeline); an event that arrives
 * out of order, or whose status ranks below the item's, is merged from the old item the failed
 * condition returned (free on the same request) and written back with one conditional PutItem
 * on the item's version. Either way the item ends the same for any order and any number of
 * copies of the same events.
 *
 * Every write also sets `statusShard`, the partition key of the table's index by outcome
 * (LEDGER_STATUS_INDEX in the kernel's ledger/schema.ts), for the outcomes the index files, and
 * removes it for the others (sent, delivered): the index is sparse. A write about a team's key
 * also sets the item's `team` and `teamKey` where the item names none yet, in that same request.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { KeyTeam } from '../kernel/ledger/binding';
import { eventId, eventsOf, merge, statusOf, STATUS_RANK, type ParsedSesEvent } from '../kernel/ledger/events';
import {
  isIndexed,
  LEDGER_INTERNAL,
  LEDGER_STATUS_INDEX,
  LEDGER_TABLE,
  statusShard,
  teamUpdate,
  type LedgerItem,
} from '../kernel/ledger/schema';

/** A stored item as read back (schema fields plus bookkeeping). */
export type StoredLedgerItem = Partial<LedgerItem> & {
  readonly key: string;
  readonly eventIds?: ReadonlySet<string>;
  readonly version?: number;
  readonly [name: string]: unknown;
};

export interface RecordResult {
  /** False when this event was already recorded (a redelivered copy). */
  readonly recorded: boolean;
  /** The status before this event (undefined for a new key). */
  readonly previousStatus?: LedgerItem['status'];
  readonly item: StoredLedgerItem;
  /** DynamoDB requests this took. */
  readonly requests: number;
}

type Client = Pick<DynamoDBClient, 'send'>;

const MAX_MERGE_ATTEMPTS = 5;

function unmarshalled(item: Record<string, unknown> | undefined): StoredLedgerItem | undefined {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return item ? (unmarshall(item as any) as StoredLedgerItem) : undefined;
}

function ids(item: StoredLedgerItem | undefined): ReadonlySet<string> {
  // A string set unmarshalls to a Set; take any iterable of strings, whichever realm made it.
  const stored = item?.eventIds as Iterable<string> | undefined;
  const fromEvents = eventsOf(item).map(eventId);
  return new Set([
    ...(stored && typeof stored !== 'string' && Symbol.iterator in Object(stored) ? stored : []),
    ...fromEvents,
  ]);
}

/** Whether recording `parsed` binds its attempt (a bound `Send`: later events of it need no claim read). */
function bindsAttempt(parsed: ParsedSesEvent): parsed is ParsedSesEvent & { readonly attemptId: string } {
  return parsed.event.type === 'Send' && parsed.attemptId !== undefined;
}

/**
 * Appends the event when it comes after everything recorded and ranks at least as high. With
 * `boundOnly`, only onto an item that already holds the `Send` of the event's attempt, of the
 * event's SES message: the event is then bound to a send without reading its claim.
 */
async function append(
  client: Client,
  tableName: string,
  parsed: ParsedSesEvent,
  retentionSeconds: number,
  boundOnly = false,
) {
  const { event } = parsed;
  const expiration = Math.floor(Date.parse(event.at) / 1000) + retentionSeconds;
  const after = 'NOT contains(#ids, :id) AND #lastAt < :at AND #rank <= :rank';
  const add = ['#ids :idSet', '#version :one', ...(bindsAttempt(parsed) ? ['#bound :attempt'] : [])];
  const team = teamUpdate(parsed);
  return client.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: marshall({ [LEDGER_TABLE.partitionKey]: parsed.key }),
      ConditionExpression: boundOnly
        ? `contains(#bound, :attemptId) AND #mid = :mid AND ${after}`
        : `attribute_not_exists(#events) OR (${after})`,
      UpdateExpression:
        'SET #events = list_append(if_not_exists(#events, :empty), :event), #status = :status, #rank = :rank, ' +
        '#lastAt = :at, #updatedAt = :at, #exp = :exp, #mid = if_not_exists(#mid, :mid)' +
        team.set +
        (isIndexed(parsed.status) ? ', #shard = :shard' : ' REMOVE #shard') +
        ` ADD ${add.join(', ')}`,
      ExpressionAttributeNames: {
        ...(boundOnly || bindsAttempt(parsed) ? { '#bound': LEDGER_INTERNAL.boundAttempts } : {}),
        '#events': 'events',
        '#ids': LEDGER_INTERNAL.eventIds,
        '#lastAt': LEDGER_INTERNAL.lastAt,
        '#rank': LEDGER_INTERNAL.rank,
        '#version': LEDGER_INTERNAL.version,
        '#status': 'status',
        '#updatedAt': 'updatedAt',
        '#exp': LEDGER_TABLE.ttlAttribute,
        '#mid': 'sesMessageId',
        '#shard': LEDGER_STATUS_INDEX.partitionKey,
        ...team.names,
      },
      ExpressionAttributeValues: marshall({
        ...(isIndexed(parsed.status) ? { ':shard': statusShard(parsed.key, parsed.status) } : {}),
        ...team.values,
        ':id': parsed.id,
        ':at': event.at,
        ':rank': STATUS_RANK[parsed.status],
        ':empty': [],
        ':event': [event],
        ':status': parsed.status,
        ':exp': expiration,
        ':mid': event.sesMessageId,
        ':idSet': new Set([parsed.id]),
        ':one': 1,
        ...(bindsAttempt(parsed) ? { ':attempt': new Set([parsed.attemptId]) } : {}),
        ...(boundOnly ? { ':attemptId': parsed.attemptId ?? '' } : {}),
      }),
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
}

/** The attempts bound on `old`, with the event's own when it binds one (undefined for none: no empty set). */
function boundAttemptsAfter(old: StoredLedgerItem, parsed: ParsedSesEvent): ReadonlySet<string> | undefined {
  const stored = old[LEDGER_INTERNAL.boundAttempts] as Iterable<string> | undefined;
  const all = new Set([
    ...(stored && typeof stored !== 'string' && Symbol.iterator in Object(stored) ? stored : []),
    ...(bindsAttempt(parsed) ? [parsed.attemptId] : []),
  ]);
  return all.size > 0 ? all : undefined;
}

/** Writes the merged item over exactly the version it was merged from. */
async function replace(
  client: Client,
  tableName: string,
  old: StoredLedgerItem,
  parsed: ParsedSesEvent,
  retentionSeconds: number,
): Promise<StoredLedgerItem | 'already recorded' | undefined> {
  const merged = merge(eventsOf(old), parsed.event, retentionSeconds);
  if (!merged) return 'already recorded';
  const item: StoredLedgerItem = {
    ...old,
    key: parsed.key,
    team: old.team ?? parsed.team,
    teamKey: old.team === undefined && parsed.team !== undefined ? parsed.teamKey : old.teamKey,
    status: merged.status,
    sesMessageId: merged.sesMessageId,
    events: merged.events,
    updatedAt: merged.updatedAt,
    expiration: Math.max(merged.expiration, typeof old.expiration === 'number' ? old.expiration : 0),
    [LEDGER_INTERNAL.lastAt]: merged.updatedAt,
    [LEDGER_INTERNAL.rank]: STATUS_RANK[merged.status],
    [LEDGER_INTERNAL.eventIds]: new Set([...ids(old), parsed.id]),
    [LEDGER_INTERNAL.version]: (old.version ?? 0) + 1,
    [LEDGER_STATUS_INDEX.partitionKey]: isIndexed(merged.status) ? statusShard(parsed.key, merged.status) : undefined,
    [LEDGER_INTERNAL.boundAttempts]: boundAttemptsAfter(old, parsed),
  };
  try {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: marshall(item, { removeUndefinedValues: true }),
        ConditionExpression: old.version === undefined ? 'attribute_not_exists(#version)' : '#version = :version',
        ExpressionAttributeNames: { '#version': LEDGER_INTERNAL.version },
        ...(old.version === undefined ? {} : { ExpressionAttributeValues: marshall({ ':version': old.version }) }),
      }),
    );
    return item;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Records one SES event: idempotent (a copy changes nothing) and order-independent (the
 * timeline is kept sorted, the status is the highest-ranked event's).
 */
export async function recordEvent(
  client: Client,
  tableName: string,
  parsed: ParsedSesEvent,
  retentionSeconds: number,
): Promise<RecordResult> {
  let requests = 0;
  for (let attempt = 1; attempt <= MAX_MERGE_ATTEMPTS; attempt += 1) {
    let old: StoredLedgerItem | undefined;
    try {
      requests += 1;
      const { Attributes } = await append(client, tableName, parsed, retentionSeconds);
      const item = unmarshalled(Attributes) ?? { key: parsed.key };
      // The appended event is the last one: the status before it is that of the others.
      const previousStatus = statusOf(eventsOf(item).slice(0, -1));
      return { recorded: true, item, requests, ...(previousStatus ? { previousStatus } : {}) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      old = unmarshalled(error.Item);
    }
    if (!old) continue; // the item went away between the check and now: append again
    const previousStatus = statusOf(eventsOf(old));
    if (ids(old).has(parsed.id)) {
      return { recorded: false, item: old, requests, ...(previousStatus ? { previousStatus } : {}) };
    }
    requests += 1;
    const item = await replace(client, tableName, old, parsed, retentionSeconds);
    if (item === 'already recorded') {
      return { recorded: false, item: old, requests, ...(previousStatus ? { previousStatus } : {}) };
    }
    if (item) return { recorded: true, item, requests, ...(previousStatus ? { previousStatus } : {}) };
  }
  throw new Error(`ledger: key ${parsed.key} kept changing under ${MAX_MERGE_ATTEMPTS} merge attempts`);
}

/**
 * Records an event of an attempt whose `Send` the ledger already holds, of that send's SES
 * message, after everything recorded: one conditional write, no claim read (the `Send` was bound
 * to the claim when it was recorded). Resolves undefined when the item does not qualify (no such
 * `Send` yet, another message, an event out of order or a copy): the caller then checks the
 * binding against the claim and records through {@link recordEvent}.
 */
export async function recordBoundEvent(
  client: Client,
  tableName: string,
  parsed: ParsedSesEvent,
  retentionSeconds: number,
): Promise<RecordResult | undefined> {
  if (parsed.attemptId === undefined || parsed.event.type === 'Send') return undefined;
  try {
    const { Attributes } = await append(client, tableName, parsed, retentionSeconds, true);
    const item = unmarshalled(Attributes) ?? { key: parsed.key };
    const previousStatus = statusOf(eventsOf(item).slice(0, -1));
    return { recorded: true, item, requests: 1, ...(previousStatus ? { previousStatus } : {}) };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** Reads a key's ledger item (strongly consistent), or undefined when there is none or it expired. */
export async function readLedgerItem(
  client: Client,
  tableName: string,
  key: string,
  nowMs = Date.now(),
): Promise<StoredLedgerItem | undefined> {
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: marshall({ [LEDGER_TABLE.partitionKey]: key }),
      ConsistentRead: true,
    }),
  );
  const item = unmarshalled(Item);
  if (!item) return undefined;
  // TTL deletes lazily: an expired item still there is as good as gone.
  if (typeof item.expiration === 'number' && item.expiration * 1000 <= nowMs) return undefined;
  return item;
}

/**
 * Marks a key's item dead-lettered (the send-email function gave up on it). One UpdateItem;
 * keeps what the events recorded and only sets the expiry (and the index's outcome, see
 * LEDGER_STATUS_INDEX) when there is none yet, and `team`'s key's team when none is named yet.
 * Resolves to the item's version after it.
 */
export async function markDeadLettered(
  client: Client,
  tableName: string,
  key: string,
  mark: NonNullable<LedgerItem['deadLettered']>,
  retentionSeconds: number,
  team?: KeyTeam,
): Promise<number | undefined> {
  const teamed = teamUpdate(team);
  const { Attributes } = await client.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: marshall({ [LEDGER_TABLE.partitionKey]: key }),
      UpdateExpression:
        'SET #dl = :dl, #updatedAt = if_not_exists(#updatedAt, :at), #exp = if_not_exists(#exp, :exp), ' +
        `#shard = if_not_exists(#shard, :shard)${teamed.set} ADD #version :one`,
      ExpressionAttributeNames: {
        '#dl': 'deadLettered',
        '#shard': LEDGER_STATUS_INDEX.partitionKey,
        '#updatedAt': 'updatedAt',
        '#exp': LEDGER_TABLE.ttlAttribute,
        '#version': LEDGER_INTERNAL.version,
        ...teamed.names,
      },
      ExpressionAttributeValues: marshall({
        ...teamed.values,
        ':dl': mark,
        ':shard': statusShard(key, 'dead-lettered'),
        ':at': mark.at,
        ':exp': Math.floor(Date.parse(mark.at) / 1000) + retentionSeconds,
        ':one': 1,
      }),
      // The item's version after the mark: a callback of the dead letter is ordered by it.
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const version = unmarshalled(Attributes)?.[LEDGER_INTERNAL.version];
  return typeof version === 'number' ? version : undefined;
}

/**
 * Records one of the pipeline's own events (`Scheduled`, `Cancelled`: PIPELINE_EVENT in the
 * schema) on a key's item, in one conditional UpdateItem, only while the item's status is one of
 * `over` (none at all when `over` is empty): a `Scheduled` is written when nothing else is known
 * of the key, so a copy of the first deferral writes nothing more; a `Cancelled` over nothing or a
 * `Scheduled`, and never over an SES status. The key is filed in the index by outcome under its new
 * status (`deliveries --outcome scheduled|cancelled`), with `team`'s key's team where none is named
 * yet. Resolves false when the condition did not hold.
 */
export async function recordPipelineEvent(
  client: Client,
  tableName: string,
  key: string,
  event: { readonly type: string; readonly at: string; readonly detail?: string },
  change: { readonly status: NonNullable<LedgerItem['status']>; readonly over: readonly string[] },
  retentionSeconds: number,
  team?: KeyTeam,
): Promise<boolean> {
  const over = change.over.map((_, i) => `#status = :over${i}`);
  const teamed = teamUpdate(team);
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: marshall({ [LEDGER_TABLE.partitionKey]: key }),
        ConditionExpression: ['attribute_not_exists(#status)', ...over].join(' OR '),
        UpdateExpression:
          'SET #events = list_append(if_not_exists(#events, :empty), :event), #status = :status, #rank = :rank, ' +
          '#lastAt = :at, #updatedAt = :at, #exp = :exp' +
          teamed.set +
          (isIndexed(change.status) ? ', #shard = :shard' : ' REMOVE #shard') +
          ' ADD #ids :idSet, #version :one',
        ExpressionAttributeNames: {
          '#events': 'events',
          '#ids': LEDGER_INTERNAL.eventIds,
          '#lastAt': LEDGER_INTERNAL.lastAt,
          '#rank': LEDGER_INTERNAL.rank,
          '#version': LEDGER_INTERNAL.version,
          '#status': 'status',
          '#updatedAt': 'updatedAt',
          '#exp': LEDGER_TABLE.ttlAttribute,
          '#shard': LEDGER_STATUS_INDEX.partitionKey,
          ...teamed.names,
        },
        ExpressionAttributeValues: marshall({
          ...(isIndexed(change.status) ? { ':shard': statusShard(key, change.status) } : {}),
          ...teamed.values,
          ':empty': [],
          ':event': [event],
          ':status': change.status,
          ':rank': STATUS_RANK[change.status],
          ':at': event.at,
          ':exp': Math.floor(Date.parse(event.at) / 1000) + retentionSeconds,
          ':idSet': new Set([eventId(event)]),
          ':one': 1,
          ...Object.fromEntries(change.over.map((status, i) => [`:over${i}`, status])),
        }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
