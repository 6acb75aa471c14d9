/**
 * A callback message per Standard Webhooks v1.0.0: its id (`webhook-id`, the same on every try,
 * the receiver's idempotency key), its body (the same on every try) and its signature
 * (`webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
 * base64-decoded secret after `whsec_`; several space-separated during a key rotation).
 *
 * Signing is one HMAC with node:crypto; the reference library (`standardwebhooks`) verifies our
 * requests in the tests, so the two are checked against each other rather than one against itself.
 */
import { createHash, createHmac } from 'node:crypto';
import { EVENT_STATUS } from '../ledger/events';
import { RESEND_EVENT_TYPE, PIPELINE_EVENT, type DeliveryReport, type LedgerEvent } from '../ledger/schema';
import { PIPELINE_TARGET } from './names';

/** A status change as the ledger publishes it on the delivery-status topic (raw delivery). */
export interface PublishedReport extends DeliveryReport {
  /** The team of a team's key. */
  readonly team?: string;
  /** A team's key as its publisher wrote it (its `key` is the ledger's hash), when SES could tag it. */
  readonly teamKey?: string;
  /** The ledger item's version when it was published: grows with every write of the key. */
  readonly sequence?: number;
}

/**
 * The report of a key the send function dead-lettered, as the callbacks queue takes it: status
 * `dead-lettered`, one `DeadLettered` event whose detail is the error code.
 */
export function deadLetterReport(
  key: string,
  team: { readonly name: string; readonly key?: string } | undefined,
  at: string,
  code: string,
  sequence: number,
): PublishedReport {
  return {
    key,
    status: 'dead-lettered',
    events: [{ type: 'DeadLettered', at, detail: code }],
    updatedAt: at,
    ...(team !== undefined ? { team: team.name, ...(team.key !== undefined ? { teamKey: team.key } : {}) } : {}),
    sequence,
  };
}

/** The body POSTed: `type` `email.<status>`, `timestamp` the change's time, `data` what changed. */
export interface CallbackBody {
  readonly type: string;
  readonly timestamp: string;
  readonly data: {
    /** The key as the publisher wrote it (for a team's key whose own key was not taggable: the ledger's hash). */
    readonly key: string;
    readonly team?: string;
    /** The ledger's key, when it is not `key` (a team's key: `sha256-<hex>` of `<team>#<key>`). */
    readonly ledgerKey?: string;
    readonly status: string;
    /** Orders one key's callbacks: a later change has a greater number. */
    readonly sequence: number;
    readonly sesMessageId?: string;
    /** The event that set the status: its type, time and detail (bounce or complaint type, …). */
    readonly event?: LedgerEvent;
  };
}

/** The event of `report` that set its status: the last one whose type means that status. */
export function statusEvent(report: Pick<DeliveryReport, 'status' | 'events'>): LedgerEvent | undefined {
  const means = (event: LedgerEvent): string | undefined =>
    EVENT_STATUS[event.type] ??
    Object.values(PIPELINE_EVENT).find((pipelineEvent) => pipelineEvent.type === event.type)?.status ??
    (event.type === 'DeadLettered' ? 'dead-lettered' : undefined);
  return [...report.events].reverse().find((event) => means(event) === report.status);
}

/**
 * The webhook-id of a status change: `msg_` and a hash of the team, key, status and how many times
 * the key was resent (a resend starts its statuses again). A status is reached once per send of a
 * key (the ledger's statuses only rise), so two copies of one change, or a change published twice,
 * share an id, and the receiver (and the callbacks table) see one message. A dead letter can come
 * again (redriven, it may fail again): its id also has the time it was dead-lettered.
 */
export function webhookId(report: Pick<PublishedReport, 'key' | 'team' | 'status' | 'events'>): string {
  const resends = report.events.filter((event) => event.type === RESEND_EVENT_TYPE).length;
  const when = report.status === 'dead-lettered' ? [statusEvent(report)?.at ?? ''] : [];
  const digest = createHash('sha256')
    .update([report.team ?? PIPELINE_TARGET, report.key, report.status, String(resends), ...when].join('\n'), 'utf8')
    .digest('base64url');
  return `msg_${digest.slice(0, 32)}`;
}

/** The body of the callback of `report` (JSON text is made once, on the first try, and stored). */
export function callbackBody(report: PublishedReport): CallbackBody {
  const event = statusEvent(report);
  return {
    type: `email.${report.status}`,
    timestamp: event?.at ?? report.updatedAt ?? new Date(0).toISOString(),
    data: {
      key: report.teamKey ?? report.key,
      ...(report.team !== undefined ? { team: report.team } : {}),
      ...(report.teamKey !== undefined ? { ledgerKey: report.key } : {}),
      status: report.status,
      sequence: report.sequence ?? report.events.length,
      ...(report.sesMessageId !== undefined ? { sesMessageId: report.sesMessageId } : {}),
      ...(event !== undefined ? { event } : {}),
    },
  };
}

/** The base64 key bytes of a `whsec_` secret (or of a bare base64 key, as Secrets Manager keeps it). */
export function secretBytes(secret: string): Buffer {
  const bytes = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (bytes.length < 24) throw new Error('a callback signing key must be at least 24 bytes (base64)');
  return bytes;
}

/** The `webhook-signature` header: `v1,<sig>` per key, space-separated (the current key first). */
export function signature(keys: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return keys
    .map(
      (key) =>
        `v1,${createHmac('sha256', secretBytes(key)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`,
    )
    .join(' ');
}

/** The three Standard Webhooks headers of one try (the timestamp is the try's own). */
export function webhookHeaders(
  keys: readonly string[],
  id: string,
  body: string,
  nowMs: number,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(keys, id, timestamp, body),
  };
}
