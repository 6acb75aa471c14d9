/**
 * The send ledger's shape, shared by everything that reads or writes it: the ledger
 * function (SES events in), the send-email function (confirm before a resend, dead-letter
 * marks), the status lookup (HTTP and CLI) and the CDK construct. Free of SDK imports on
 * purpose, so every bundle can use it without pulling one in.
 *
 * One item per dedupe key (the `dedupe-key` tag every send carries).
 */

/** The ledger table: partition key `key` (the dedupe key), TTL attribute `expiration` (epoch seconds). */
export const LEDGER_TABLE = { partitionKey: 'key', ttlAttribute: 'expiration' } as const;

import { createHash } from 'node:crypto';

/** The message tag every SES send carries; its value is the dedupe key (see {@link ledgerKey}). */
export const DEDUPE_KEY_TAG = 'dedupe-key';

/** What every hashed {@link ledgerKey} starts with; a key that starts with it is hashed too. */
export const HASHED_KEY_PREFIX = 'sha256-';

/**
 * The `dedupe-key` tag value of a key, which is also its ledger item's key: the key itself when
 * SES accepts it as a tag value (letters, digits, _ and -, at most 256) and it does not start with
 * `sha256-`, else `sha256-<hex>` of it. One to one: a key never stands for itself when it could be
 * another key's hash (`order.1` and `sha256-<hex of order.1>` used to share an item).
 */
export function ledgerKey(dedupeKey: string): string {
  if (/^[A-Za-z0-9_-]{1,256}$/.test(dedupeKey) && !dedupeKey.startsWith(HASHED_KEY_PREFIX)) return dedupeKey;
  return `${HASHED_KEY_PREFIX}${createHash('sha256').update(dedupeKey, 'utf8').digest('hex')}`;
}

/**
 * Statuses the ledger records: from SES events, and (the last two) from the pipeline's own events
 * before any send: `scheduled` while a key waits for its `sendAt` (the send function's `Scheduled`
 * event), `cancelled` once a key not yet sent was cancelled (the `Cancelled` event, see
 * {@link PIPELINE_EVENT}). Either gives way to an SES status.
 */
export const LEDGER_STATUSES = [
  'sent',
  'delayed',
  'delivered',
  'bounced',
  'complained',
  'rejected',
  'scheduled',
  'cancelled',
] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

/** Statuses a lookup reports: the ledger's, plus what only the idempotency record or the DLQ knows. */
export const DELIVERY_STATUSES = ['unknown', 'in-progress', 'dead-lettered', ...LEDGER_STATUSES] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The ledger table's index of keys by outcome (`email-pipeline deliveries`): partition
 * `statusShard` (`<outcome>#<shard>`, see {@link statusShard}), sort `updatedAt`, keys only.
 * Sparse: only keys whose outcome is one of {@link INDEXED_OUTCOMES} carry `statusShard`.
 */
export const LEDGER_STATUS_INDEX = {
  indexName: 'by-status',
  partitionKey: 'statusShard',
  sortKey: 'updatedAt',
  /** Partitions per outcome: writes of one outcome spread over this many index partitions. */
  shards: 4,
} as const;

/** What the index files a key under: its ledger status, or `dead-lettered` when only the dead-letter mark is there. */
export type IndexedOutcome = LedgerStatus | 'dead-lettered';

/**
 * The outcomes the index files (what operators list: `email-pipeline deliveries --outcome`). `sent`
 * and `delivered`, the outcome of nearly every email, are left out: indexing them cost three index
 * writes per email for lists nobody reads by the million (BENCHMARKS 5b). A key whose status
 * moves to one of them leaves the index.
 */
export const INDEXED_OUTCOMES: readonly IndexedOutcome[] = [
  'delayed',
  'bounced',
  'complained',
  'rejected',
  'dead-lettered',
  'scheduled',
  'cancelled',
];

/** Whether keys with `outcome` are in the index. */
export function isIndexed(outcome: IndexedOutcome): boolean {
  return INDEXED_OUTCOMES.includes(outcome);
}

/** The index partition of `key` (a ledger key) with `outcome`: `<outcome>#<0..shards-1>`, stable per key. */
export function statusShard(key: string, outcome: IndexedOutcome): string {
  const shard = createHash('sha256').update(key, 'utf8').digest().readUInt32BE(0) % LEDGER_STATUS_INDEX.shards;
  return `${outcome}#${shard}`;
}

/** The type of the timeline event `email-pipeline resend` records: the statuses before it no longer count. */
export const RESEND_EVENT_TYPE = 'Resend';

/** The pipeline's own event types (no SES event has them), and the status each one means. */
export const PIPELINE_EVENT = {
  /** The send function deferred the key's first copy until its `sendAt` (detail: the `sendAt`). */
  scheduled: { type: 'Scheduled', status: 'scheduled' },
  /** The key was cancelled before any send (detail: by whom). */
  cancelled: { type: 'Cancelled', status: 'cancelled' },
} as const;

/** One event of a key's timeline. */
export interface LedgerEvent {
  /** SES's eventType as published (`Send`, `Delivery`, `Bounce`, `Complaint`, `Reject`, `DeliveryDelay`, `Rendering Failure`), `DeadLettered`, or the pipeline's `Scheduled`, `Cancelled`. */
  readonly type: string;
  /** When it happened (ISO 8601): the event's own timestamp, not when it was recorded. */
  readonly at: string;
  readonly sesMessageId?: string;
  /** A short, recipient-free detail (bounce type, complaint feedback type, delay type, reason code). */
  readonly detail?: string;
  /** The attempt id of the send the event is bound to (kept in the ledger, never shown: see binding.ts). */
  readonly attemptId?: string;
}

/** An event as readers see it (status API, CLI, delivery-status topic): without its attempt id. */
export function shownEvent(event: LedgerEvent): LedgerEvent {
  if (event.attemptId === undefined) return event;
  const { attemptId, ...shown } = event;
  void attemptId;
  return shown;
}

/** The ledger item as stored (DynamoDB attribute names). */
export interface LedgerItem {
  readonly key: string;
  readonly status?: LedgerStatus;
  readonly sesMessageId?: string;
  readonly events: readonly LedgerEvent[];
  /** Set by the send-email function when it dead-letters a record with this key. */
  readonly deadLettered?: { readonly at: string; readonly code: string; readonly reason: string };
  /**
   * The team of a team's key (`<team>#<key>`, whose item key is a hash), from the `dedupe-team` tag
   * of the first event that carries it: `email-pipeline deliveries --team` lists by it.
   */
  readonly team?: string;
  /** The key as the team's publisher wrote it (the `dedupe-team-key` tag), when SES took it as a tag. */
  readonly teamKey?: string;
  readonly updatedAt: string;
  /** Epoch seconds; DynamoDB TTL cleans up after it (expiry is also checked on read). */
  readonly expiration: number;
}

/** The attributes naming a team's key's team on its item (LedgerItem's `team` and `teamKey`). */
export const LEDGER_TEAM = { team: 'team', teamKey: 'teamKey' } as const satisfies Record<string, keyof LedgerItem>;

/**
 * What writes a key's team on its item (`team`, `teamKey`: LedgerItem) where the item names none
 * yet, as parts of an UpdateItem (lambdas/runtime/ledger-store.ts): nothing without a team. The
 * first write that knows the team sets it; later ones leave it (no read, no extra request).
 */
export function teamUpdate(tagged: { readonly team?: string; readonly teamKey?: string } | undefined) {
  const attributes =
    tagged?.team === undefined ? {} : { [LEDGER_TEAM.team]: tagged.team, [LEDGER_TEAM.teamKey]: tagged.teamKey };
  const set = Object.entries(attributes).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return {
    set: set.map(([name]) => `, #${name} = if_not_exists(#${name}, :${name})`).join(''),
    names: Object.fromEntries(set.map(([name]) => [`#${name}`, name])),
    values: Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
  };
}

/**
 * Bookkeeping attributes beside those of {@link LedgerItem}: never shown to readers. The ledger's
 * store writes them (lambdas/runtime/ledger-store.ts), and so do `email-pipeline resend` and the
 * cancel function, whose grant names the ones it writes (lib/construct/ledger/functions.ts).
 */
export const LEDGER_INTERNAL = {
  /** String set of the recorded events' ids (type#sesMessageId#timestamp). */
  eventIds: 'eventIds',
  /** The latest event's time (ISO 8601): an event at or before it is merged, not appended. */
  lastAt: 'lastAt',
  /** STATUS_RANK of the status. */
  rank: 'statusRank',
  /** Writes so far; the merge path writes only over the version it read. */
  version: 'version',
  /**
   * String set of the attempt ids whose `Send` event the ledger recorded (each passed the binding
   * check against its claim): a later event of the same attempt and SES message id is recorded by
   * one conditional write on them, without reading the claim again (recordBoundEvent in
   * lambdas/runtime/ledger-store.ts).
   */
  boundAttempts: 'boundAttempts',
} as const;

/** What the status API (`GET /deliveries/{key}`) and `npm run status -- --json` return. */
export interface DeliveryReport {
  readonly key: string;
  readonly status: DeliveryStatus;
  readonly sesMessageId?: string;
  readonly events: readonly LedgerEvent[];
  readonly updatedAt?: string;
}
