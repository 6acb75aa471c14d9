/**
 * Evidence bound to sends. The ledger decides whether an email is sent again, so it believes
 * only SES events that are the pipeline's own:
 *
 * - origin: SES's own event (source aws.ses) on the pipeline account's bus, with the pipeline's account, configuration set
 *   and caller identity (the send function's role). These fields can be copied from any real
 *   event, so they only keep out what never came through the pipeline;
 * - binding: every send carries, beside `dedupe-key`, an attempt id the send function draws at
 *   random and writes with its claim (the idempotency record) before it calls SES, and a
 *   reference to that claim. An event is bound when its claim belongs to its key and lists its
 *   attempt id; once an attempt's SES message id is known (SES's answer stored with the claim,
 *   or the attempt's `Send` event), only events of that message id are bound to it.
 *
 * Pure: no SDK, no clock. The reads are in lambdas/runtime/ledger-store.ts and lambdas/ledger/ledger.ts.
 */

/** The message tag with the attempt id of a send (random, 128 bits, hex). */
export const DEDUPE_ATTEMPT_TAG = 'dedupe-attempt';
/** The message tag with the send's claim: the idempotency record's hash, base64url. */
export const DEDUPE_CLAIM_TAG = 'dedupe-claim';
/**
 * The message tag with the team of a team's key (`<team>#<key>`, whose `dedupe-key` is a hash):
 * the ledger names it on the delivery-status topic. Only the send function sets it (tag names
 * starting with `dedupe` are refused in messages).
 */
export const DEDUPE_TEAM_TAG = 'dedupe-team';

/**
 * The message tag with a team's key as its publisher wrote it (without `<team>#`), when SES takes it
 * as a tag value: the ledger passes it on to the status topic and callbacks, whose `key` is else
 * the hash. Only the send function sets it.
 */
export const DEDUPE_TEAM_KEY_TAG = 'dedupe-team-key';

/** Whether SES takes `value` as a tag value (letters, digits, `_` and `-`, at most 256). */
export function fitsTag(value: string): boolean {
  return TAG_VALUE.test(value);
}

/** A team's key's team, and the key as its publisher wrote it when it fits a tag (what the two tags carry). */
export interface KeyTeam {
  readonly team: string;
  readonly teamKey?: string;
}

/** What the team tags of `key` (a dedupe key, `<team>#<key>` for `team`) say; undefined without a team. */
export function keyTeam(team: string | undefined, key: string): KeyTeam | undefined {
  if (team === undefined) return undefined;
  const own = key.slice(team.length + 1);
  return fitsTag(own) ? { team, teamKey: own } : { team };
}

/** Attributes the send function adds to its claim (the Powertools idempotency record). */
export const CLAIM_ATTRIBUTES = {
  /** String set: every attempt id a send of this record was made with and whose fate is not settled otherwise. */
  attempts: 'sendAttempts',
  /** The key's ledger key (the `dedupe-key` tag): whose claim this is. */
  ledgerKey: 'ledgerKey',
} as const;

/** SES tag values: letters, digits, `_` and `-`, at most 256. */
const TAG_VALUE = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * The claim reference a send carries: the hash part of the record id `<keyPrefix>#<base64 hash>`
 * in base64url (SES tag values allow neither `+`, `/`, `=` nor `#`).
 */
export function claimRef(keyPrefix: string, recordId: string): string {
  const hash = recordId.startsWith(`${keyPrefix}#`) ? recordId.slice(keyPrefix.length + 1) : recordId;
  return Buffer.from(hash, 'base64').toString('base64url');
}

/** The record id a claim reference points to, or undefined when the reference is malformed. */
export function claimRecordId(keyPrefix: string, ref: string): string | undefined {
  if (!TAG_VALUE.test(ref)) return undefined;
  const bytes = Buffer.from(ref, 'base64url');
  if (bytes.length === 0 || bytes.toString('base64url') !== ref) return undefined;
  return `${keyPrefix}#${bytes.toString('base64')}`;
}

/**
 * The EventBridge source of SES's events: no `PutEvents` caller may use a source that begins with
 * `aws.` (EventBridge's API reference, NotAuthorizedForSourceException), so only SES can put it.
 */
export const SES_EVENT_SOURCE = 'aws.ses';

/** Where the pipeline's own events come from. */
export interface TrustedOrigin {
  /** The pipeline's account: the EventBridge envelope's `account` and the event's `mail.sendingAccountId`. */
  readonly accountId: string;
  /** The `ses:configuration-set` tag. */
  readonly configurationSetName: string;
  /** The `ses:caller-identity` tag: the IAM name of the send function's role. */
  readonly senderRoleName: string;
}

/** What an SES event says of where it came from (read by events.ts and the ledger's envelope reader). */
export interface EventOrigin {
  /** The EventBridge envelope's `source`. */
  readonly source?: string;
  /** The EventBridge envelope's `account`: the account whose bus the event was put on. */
  readonly busAccount?: string;
  /** `mail.sendingAccountId`. */
  readonly accountId?: string;
  readonly configurationSet?: string;
  readonly callerIdentity?: string;
}

/**
 * Why an event is not from the pipeline, or undefined when it is. The source and the bus's account
 * say SES put it on this account's bus (another account's events forwarded to it keep their source
 * but carry that account); the rest say it is this pipeline's send. Origin fields alone can be
 * copied from any real event: the binding (below) ties it to a send.
 */
export function originProblem(origin: EventOrigin, trusted: TrustedOrigin): string | undefined {
  if (origin.source !== SES_EVENT_SOURCE) return `not an SES event (source is not ${SES_EVENT_SOURCE})`;
  if (origin.busAccount !== trusted.accountId) return "put on another account's event bus";
  if (origin.accountId !== trusted.accountId) return 'sent from another account';
  if (origin.configurationSet !== trusted.configurationSetName) return 'sent through another configuration set';
  if (origin.callerIdentity !== trusted.senderRoleName) return 'sent by another caller than the send function';
  return undefined;
}

/** The claim as the ledger reads it from the idempotency table. */
export interface ClaimEvidence {
  readonly ledgerKey?: string;
  readonly attempts: ReadonlySet<string>;
  /** SES's answer as the claim stores it once completed. */
  readonly completed?: { readonly attemptId?: string; readonly sesMessageId?: string };
}

/** A claim record (unmarshalled) as evidence; tolerant of any stored shape. */
export function claimEvidence(record: Readonly<Record<string, unknown>> | undefined): ClaimEvidence | undefined {
  if (!record) return undefined;
  const stored = record[CLAIM_ATTRIBUTES.attempts];
  const attempts = new Set<string>();
  if (stored && typeof stored === 'object' && Symbol.iterator in stored) {
    for (const value of stored as Iterable<unknown>) if (typeof value === 'string') attempts.add(value);
  }
  const ledgerKey = record[CLAIM_ATTRIBUTES.ledgerKey];
  const data = record.data as { attemptId?: unknown; sesMessageId?: unknown } | undefined;
  const completed =
    data && typeof data === 'object'
      ? {
          ...(typeof data.attemptId === 'string' ? { attemptId: data.attemptId } : {}),
          ...(typeof data.sesMessageId === 'string' ? { sesMessageId: data.sesMessageId } : {}),
        }
      : undefined;
  return {
    ...(typeof ledgerKey === 'string' ? { ledgerKey } : {}),
    attempts,
    ...(completed ? { completed } : {}),
  };
}

/**
 * Why an event is not bound to a send of its key, or undefined when it is. `recordedSend` is
 * the SES message id of the attempt's `Send` event already in the ledger, if any.
 */
export function bindingProblem(
  parsed: {
    readonly key: string;
    readonly attemptId?: string;
    readonly event: { readonly sesMessageId: string };
  },
  claim: ClaimEvidence | undefined,
  recordedSend?: string,
): string | undefined {
  const attemptId = parsed.attemptId;
  if (attemptId === undefined) return `carries no ${DEDUPE_ATTEMPT_TAG} tag`;
  if (!claim) return 'names no claim of the pipeline';
  if (claim.ledgerKey !== parsed.key) return 'names the claim of another key';
  if (!claim.attempts.has(attemptId)) return 'carries an attempt id the pipeline never sent with';
  const answered = claim.completed?.attemptId === attemptId ? claim.completed.sesMessageId : undefined;
  const known = answered ?? recordedSend;
  if (known !== undefined && known !== parsed.event.sesMessageId) {
    return `is for SES message ${parsed.event.sesMessageId}, but this attempt is SES message ${known}`;
  }
  return undefined;
}
