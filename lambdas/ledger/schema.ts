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

/** Environment variables of the ledger-related functions. */
export const LEDGER_ENV = {
  /** Ledger table name (send-email, ledger and status functions). */
  tableName: 'LEDGER_TABLE_NAME',
  /** Topic that receives a message on every status change (ledger function). */
  deliveryStatusTopicArn: 'DELIVERY_STATUS_TOPIC_ARN',
  /** How long a ledger item lives (ledger function); the pipeline's dedupe window. */
  retentionSeconds: 'LEDGER_RETENTION_SECONDS',
  /** How long an unknown-fate send waits for its SES event before it is sent again (send-email). */
  sendConfirmationGraceSeconds: 'SEND_CONFIRMATION_GRACE_SECONDS',
  /** The SES events topic: the only envelopes the ledger function reads (ledger). */
  eventsTopicArn: 'EVENTS_TOPIC_ARN',
  /** The account the pipeline sends from: `mail.sendingAccountId` of its events (ledger). */
  accountId: 'PIPELINE_ACCOUNT_ID',
  /** The configuration set every send uses: the `ses:configuration-set` tag of its events (ledger). */
  configurationSetName: 'CONFIGURATION_SET_NAME',
  /** The send function's role name: the `ses:caller-identity` tag of its events (ledger). */
  senderRoleName: 'SENDER_ROLE_NAME',
} as const;

/** Statuses the ledger itself records, from SES events. */
export const LEDGER_STATUSES = ['sent', 'delayed', 'delivered', 'bounced', 'complained', 'rejected'] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

/** Statuses a lookup reports: the ledger's, plus what only the idempotency record or the DLQ knows. */
export const DELIVERY_STATUSES = ['unknown', 'in-progress', 'dead-lettered', ...LEDGER_STATUSES] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event of a key's timeline. */
export interface LedgerEvent {
  /** SES's eventType as published (`Send`, `Delivery`, `Bounce`, `Complaint`, `Reject`, `DeliveryDelay`, `Rendering Failure`), or `DeadLettered`. */
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
  readonly updatedAt: string;
  /** Epoch seconds; DynamoDB TTL cleans up after it (expiry is also checked on read). */
  readonly expiration: number;
}

/** What the status API (`GET /deliveries/{key}`) and `npm run status -- --json` return. */
export interface DeliveryReport {
  readonly key: string;
  readonly status: DeliveryStatus;
  readonly sesMessageId?: string;
  readonly events: readonly LedgerEvent[];
  readonly updatedAt?: string;
}
