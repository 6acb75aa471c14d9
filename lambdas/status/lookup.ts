/**
 * What happened to a dedupe key: the send ledger's item when SES events came in,
 * else the idempotency record (claimed or sent, no event yet), else `unknown`.
 * Pure apart from the DynamoDB client it is given; the status function, the
 * local status server and `npm run status` all use it.
 */
import { createHash } from 'node:crypto';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { idempotencyKeyIssues, normalizeIdempotencyKey } from '../kernel/contract';
import { cancelDetail, cancelMarkOf } from '../kernel/ledger/cancel-mark';
import { TEAM_NAME, teamKey } from '../kernel/teams';
import {
  LEDGER_TABLE,
  ledgerKey,
  PIPELINE_EVENT,
  shownEvent,
  type DeliveryReport,
  type LedgerEvent,
  type LedgerItem,
} from '../kernel/ledger/schema';

/** The HTTP path of a lookup: `GET /deliveries/{key}` (the key URL-encoded). */
export const DELIVERIES_PATH = '/deliveries/';

/** Where to look. */
export interface LookupTarget {
  /** The send ledger's table. */
  readonly ledgerTableName: string;
  /** The Powertools idempotency table of the send function. */
  readonly idempotencyTableName: string;
  /** The send function's idempotency key prefix (IDEMPOTENCY_KEY_PREFIX). */
  readonly keyPrefix: string;
}

export interface LookupDeps extends LookupTarget {
  readonly db: Pick<DynamoDBDocumentClient, 'send'>;
  /** Epoch milliseconds. @default Date.now */
  readonly now?: () => number;
}

/**
 * Why a key cannot be a dedupe key, or undefined when it can: the same rules
 * the send function applies to the `idempotency-key` attribute (a String one:
 * a Number key is looked up by its plain decimal form, `1000` for `1e3`).
 */
export function keyProblem(key: string): string | undefined {
  return idempotencyKeyIssues(key)[0]?.reason;
}

/** The dedupe key a lookup of `key` reads: the key as the send function makes it (Unicode NFC). */
export function lookupKey(key: string): string {
  return normalizeIdempotencyKey(key);
}

/** A team name that cannot be one (kernel/teams.ts, TEAM_NAME). */
export class InvalidTeamError extends Error {
  constructor(readonly team: string) {
    super(
      `Invalid team ${JSON.stringify(team)}: a team name is 1 to 32 lowercase letters, digits or "-", starting with a letter`,
    );
    this.name = 'InvalidTeamError';
  }
}

/** A key that {@link keyProblem} refuses. */
export class InvalidKeyError extends Error {
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`Invalid key ${JSON.stringify(key)}: ${problem}`);
    this.name = 'InvalidKeyError';
  }
}

/**
 * The id of the key's Powertools idempotency record: `<keyPrefix>#<hash>`, the
 * hash being the base64 MD5 digest of the JSON of the key (the send function's
 * eventKeyJmesPath picks the bare key string; Powertools 2.x hashes
 * `JSON.stringify` of it with its default `md5`).
 */
export function idempotencyRecordId(keyPrefix: string, key: string): string {
  return `${keyPrefix}#${createHash('md5').update(JSON.stringify(key)).digest('base64')}`;
}

/** The parts of a Powertools idempotency record a lookup reads. */
interface IdempotencyRecord {
  readonly status?: string;
  /** Epoch seconds. */
  readonly expiration?: number;
  /** SES's answer, or a cancel mark (kernel/ledger/cancel-mark.ts). */
  readonly data?: { readonly sesMessageId?: string; readonly sentAt?: string };
}

function byTime(a: LedgerEvent, b: LedgerEvent): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : 0;
}

/** The ledger item's timeline, with the dead-letter mark as an event, oldest first. */
function timeline(item: LedgerItem): LedgerEvent[] {
  const events = (item.events ?? []).map(shownEvent);
  const mark = item.deadLettered;
  if (mark !== undefined && !events.some((e) => e.type === 'DeadLettered' && e.at === mark.at)) {
    events.push({ type: 'DeadLettered', at: mark.at, detail: mark.code });
  }
  return events.sort(byTime);
}

function live(expiration: unknown, nowMs: number): boolean {
  return typeof expiration !== 'number' || expiration * 1000 > nowMs;
}

/**
 * The key's delivery report. Expired items and records count as absent (TTL
 * deletes them late). An SES event status wins over a dead-letter mark (a
 * copy with other content may be dead-lettered after the original was sent);
 * a live idempotency record wins over a mark too (the key was redriven).
 * The key is read as the send function makes it ({@link lookupKey}; a `team`'s in its
 * namespace, `<team>#<key>`), and the report names it so.
 */
export async function lookupDelivery(deps: LookupDeps, asked: string, team?: string): Promise<DeliveryReport> {
  const problem = keyProblem(asked);
  if (problem !== undefined) throw new InvalidKeyError(asked, problem);
  if (team !== undefined && !TEAM_NAME.test(team)) throw new InvalidTeamError(team);
  // A team's key lives in its namespace, as the send function makes it (kernel/teams.ts).
  const key = team !== undefined ? teamKey(team, lookupKey(asked)) : lookupKey(asked);
  const nowMs = (deps.now ?? Date.now)();

  const ledger = await deps.db.send(
    new GetCommand({ TableName: deps.ledgerTableName, Key: { [LEDGER_TABLE.partitionKey]: ledgerKey(key) } }),
  );
  const item = ledger.Item as LedgerItem | undefined;
  const found = item !== undefined && live(item.expiration, nowMs) ? item : undefined;
  // `scheduled` holds until the send: its claim (in progress, sent) or a cancel mark tells more.
  if (found?.status !== undefined && found.status !== 'scheduled') {
    return {
      key,
      status: found.status,
      ...(found.sesMessageId !== undefined ? { sesMessageId: found.sesMessageId } : {}),
      events: timeline(found),
      updatedAt: found.updatedAt,
    };
  }

  const claim = await deps.db.send(
    // `id`: the partition key Powertools' DynamoDB persistence layer uses by default (IDEMPOTENCY_TABLE in lib/construct/handler-env.ts).
    new GetCommand({ TableName: deps.idempotencyTableName, Key: { id: idempotencyRecordId(deps.keyPrefix, key) } }),
  );
  const record = claim.Item as IdempotencyRecord | undefined;
  const events = found !== undefined ? timeline(found) : [];
  if (record !== undefined && live(record.expiration, nowMs)) {
    const mark = cancelMarkOf(record.data);
    if (record.status === 'COMPLETED' && mark !== undefined) {
      // The mark decides; its ledger event may not be written yet (or failed): the mark says when and by whom.
      const cancelled = { type: PIPELINE_EVENT.cancelled.type, at: mark.cancelledAt, detail: cancelDetail(mark) };
      const shown = events.some((e) => e.type === cancelled.type) ? events : [...events, cancelled];
      return { key, status: 'cancelled', events: shown, updatedAt: mark.cancelledAt };
    }
    if (record.status === 'COMPLETED') {
      const { sesMessageId, sentAt } = record.data ?? {};
      return {
        key,
        status: 'sent',
        ...(sesMessageId !== undefined ? { sesMessageId } : {}),
        events,
        ...(sentAt !== undefined ? { updatedAt: sentAt } : {}),
      };
    }
    if (record.status === 'INPROGRESS') return { key, status: 'in-progress', events };
  }
  if (found?.status === 'scheduled') return { key, status: 'scheduled', events, updatedAt: found.updatedAt };
  if (found?.deadLettered !== undefined) {
    return { key, status: 'dead-lettered', events, updatedAt: found.updatedAt };
  }
  // A key released by `email-pipeline resend` and not sent again yet: unknown, with its timeline.
  return { key, status: 'unknown', events };
}
