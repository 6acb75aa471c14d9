/**
 * SES events, as SES puts them on EventBridge's default bus (a configuration set's EventBridge
 * destination) and a rule delivers them to the ledger's buffer queue, turned into ledger entries,
 * and the status order that makes the ledger independent of the order events arrive in.
 * Pure: no SDK, no clock.
 */
import {
  DEDUPE_ATTEMPT_TAG,
  DEDUPE_CLAIM_TAG,
  DEDUPE_TEAM_KEY_TAG,
  DEDUPE_TEAM_TAG,
  type EventOrigin,
} from './binding';

import {
  DEDUPE_KEY_TAG,
  LEDGER_STATUSES,
  RESEND_EVENT_TYPE,
  PIPELINE_EVENT,
  type LedgerEvent,
  type LedgerItem,
  type LedgerStatus,
} from './schema';

/** The SES event types the ledger records, and the status each one means. */
export const EVENT_STATUS: Readonly<Record<string, LedgerStatus>> = {
  Send: 'sent',
  DeliveryDelay: 'delayed',
  Delivery: 'delivered',
  Reject: 'rejected',
  'Rendering Failure': 'rejected',
  Bounce: 'bounced',
  Complaint: 'complained',
};

/**
 * The status order, lowest first: `sent` < `delayed` < `delivered`, and the outcomes that win
 * over those (a Bounce after a Delivery wins). The status of a key is its highest-ranked
 * event's, whatever order the events came in.
 */
export const STATUS_RANK: Readonly<Record<LedgerStatus, number>> = {
  // The pipeline's own, below every SES status: an email cancelled is never sent, and any SES
  // event of a key (one sent after all) tells more than that it was scheduled or cancelled.
  scheduled: -1,
  cancelled: 0,
  sent: 1,
  delayed: 2,
  delivered: 3,
  rejected: 4,
  bounced: 5,
  complained: 6,
};

/** The status an SES event type means, looked up without the prototype (`__proto__` is no event type). */
export function statusOfType(type: string): LedgerStatus | undefined {
  return Object.hasOwn(EVENT_STATUS, type) ? EVENT_STATUS[type] : undefined;
}

/** The pipeline's own event types and their statuses (never an SES event's: see parseSesEvent). */
const PIPELINE_EVENT_STATUS: Readonly<Record<string, LedgerStatus>> = Object.fromEntries(
  Object.values(PIPELINE_EVENT).map(({ type, status }) => [type, status]),
);

/** The status a recorded event means: an SES event's, or the pipeline's own `Scheduled`, `Cancelled`. */
export function statusOfRecorded(type: string): LedgerStatus | undefined {
  return statusOfType(type) ?? (Object.hasOwn(PIPELINE_EVENT_STATUS, type) ? PIPELINE_EVENT_STATUS[type] : undefined);
}

/**
 * EventBridge's detail-type of each SES event type (EventBridge events reference, "Amazon SES
 * events"; the detail's `eventType` is the same as SES writes to any other destination).
 */
export const SES_DETAIL_TYPES: Readonly<Record<string, string>> = {
  Send: 'Email Sent',
  Delivery: 'Email Delivered',
  DeliveryDelay: 'Email Delivery Delayed',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  'Rendering Failure': 'Email Rendering Failed',
  Open: 'Email Opened',
  Click: 'Email Clicked',
  Subscription: 'Email Subscribed',
};

/** What one buffer-queue record holds: SES's event and where the envelope says it came from. */
export interface ReceivedSesEvent {
  /** The envelope's `source` and `account` (originProblem checks them). */
  readonly origin: Pick<EventOrigin, 'source' | 'busAccount'>;
  /** SES's event: the envelope's `detail`. */
  readonly message: unknown;
}

/**
 * Reads an EventBridge event as a rule with an SQS target delivers it (the record's body is the
 * event itself: `version`, `id`, `detail-type`, `source`, `account`, `time`, `region`,
 * `resources`, `detail`). Throws {@link InvalidSesEventError} naming the field at fault, and when
 * the detail-type and the detail's `eventType` disagree.
 */
export function readEventBridgeEnvelope(body: string): ReceivedSesEvent {
  let envelope: unknown;
  try {
    envelope = JSON.parse(body);
  } catch {
    throw new InvalidSesEventError('body', 'is not JSON');
  }
  if (!isObject(envelope)) throw new InvalidSesEventError('body', 'is not an EventBridge event (a JSON object)');
  const detailType = envelope['detail-type'];
  const detail = envelope.detail;
  if (typeof detailType !== 'string' || !isObject(detail)) {
    throw new InvalidSesEventError('body', 'is not an EventBridge event with a detail-type and a detail object');
  }
  const eventType = typeof detail.eventType === 'string' ? detail.eventType : undefined;
  if (
    eventType !== undefined &&
    Object.hasOwn(SES_DETAIL_TYPES, eventType) &&
    SES_DETAIL_TYPES[eventType] !== detailType
  ) {
    throw new InvalidSesEventError(
      'detail-type',
      `is ${JSON.stringify(detailType.slice(0, 64))}, not the one of a ${eventType} event`,
    );
  }
  return {
    origin: {
      ...(typeof envelope.source === 'string' ? { source: envelope.source } : {}),
      ...(typeof envelope.account === 'string' ? { busAccount: envelope.account } : {}),
    },
    message: detail,
  };
}

/** An SES event the ledger can record. */
export interface ParsedSesEvent {
  /** The `dedupe-key` tag's value. */
  readonly key: string;
  readonly event: LedgerEvent & { readonly sesMessageId: string };
  readonly status: LedgerStatus;
  /** Identifies the event: type, SES MessageId and timestamp (a redelivered event has the same id). */
  readonly id: string;
  /** The `dedupe-attempt` tag: the attempt id of the send (see binding.ts). */
  readonly attemptId?: string;
  /** The `dedupe-claim` tag: which claim the send was made under. */
  readonly claimRef?: string;
  /** The `dedupe-team` tag: the team of a team's key. */
  readonly team?: string;
  /** The `dedupe-team-key` tag: a team's key as its publisher wrote it (when it fits a tag). */
  readonly teamKey?: string;
  /** What the event says of where it came from (the envelope's source and account are added by the caller). */
  readonly origin: EventOrigin;
}

/** An SES event that cannot be recorded, with the field at fault. */
export class InvalidSesEventError extends Error {
  override readonly name = 'InvalidSesEventError';
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`SES event: ${field} ${reason}`);
  }
}

/** An SES event of an email sent without the `dedupe-key` tag (another sender using the configuration set). */
export class UntaggedSesEventError extends Error {
  override readonly name = 'UntaggedSesEventError';
  constructor(readonly sesMessageId: string) {
    super(`SES event for ${sesMessageId} has no ${DEDUPE_KEY_TAG} tag`);
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(parent: Json, name: string, path: string): Json {
  const value = parent[name];
  if (!isObject(value)) throw new InvalidSesEventError(path, 'is missing or not an object');
  return value;
}

function text(parent: Json, name: string, path: string): string {
  const value = parent[name];
  if (typeof value !== 'string' || value === '') throw new InvalidSesEventError(path, 'is missing or not a string');
  return value;
}

/** RFC 3339 date-time, as SES writes it (`2017-08-05T00:41:02.669Z`). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** The range of times an SES event may carry: SES began in 2011; nothing of ours runs past 2100. */
export const EVENT_TIME_RANGE = { from: Date.UTC(2010, 0, 1), to: Date.UTC(2100, 0, 1) } as const;

function isoTime(parent: Json, name: string, path: string): string {
  const value = text(parent, name, path);
  const shown = JSON.stringify(value.slice(0, 64));
  const parts = RFC3339.exec(value);
  const [year, month, day, hour, minute, second] = (parts ?? []).slice(1, 7).map(Number) as number[];
  const calendar = new Date(Date.UTC(year ?? 0, (month ?? 0) - 1, day ?? 0));
  if (
    !parts ||
    calendar.getUTCMonth() + 1 !== month ||
    calendar.getUTCDate() !== day ||
    (hour ?? 24) > 23 ||
    (minute ?? 60) > 59 ||
    (second ?? 60) > 59
  ) {
    throw new InvalidSesEventError(path, `is not an RFC 3339 timestamp: ${shown}`);
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms < EVENT_TIME_RANGE.from || ms >= EVENT_TIME_RANGE.to) {
    throw new InvalidSesEventError(path, `is not a time between 2010 and 2100: ${shown}`);
  }
  return new Date(ms).toISOString();
}

/** The single value of a message tag (SES writes each tag as a list of one string), if it has one. */
function tagValue(tags: Json, name: string): string | undefined {
  if (!Object.hasOwn(tags, name)) return undefined;
  const values = tags[name];
  return Array.isArray(values) && typeof values[0] === 'string' && values[0] !== '' ? values[0] : undefined;
}

/** A short, recipient-free detail of the event (never an address). */
function detailOf(type: string, body: Json | undefined): string | undefined {
  if (!body) return undefined;
  const pick = (...names: string[]) =>
    names.map((n) => body[n]).filter((v): v is string => typeof v === 'string' && v !== '');
  const parts: Record<string, string[]> = {
    Bounce: pick('bounceType', 'bounceSubType'),
    Complaint: pick('complaintFeedbackType', 'complaintSubType'),
    DeliveryDelay: pick('delayType'),
    Reject: pick('reason'),
    'Rendering Failure': pick('errorMessage'),
  };
  const detail = (Object.hasOwn(parts, type) ? (parts[type] ?? []) : []).join('/').slice(0, 200);
  return detail === '' ? undefined : detail;
}

/** Where the event's own time is: the event object's timestamp, else the mail's (Send, Reject). */
const EVENT_OBJECT: Readonly<Record<string, string>> = {
  Send: 'send',
  Delivery: 'delivery',
  DeliveryDelay: 'deliveryDelay',
  Bounce: 'bounce',
  Complaint: 'complaint',
  Reject: 'reject',
  'Rendering Failure': 'failure',
};

/**
 * Reads one SES event (the SNS Message of an SES event destination). Throws
 * {@link InvalidSesEventError} naming the field at fault, or {@link UntaggedSesEventError}
 * for an email that carried no dedupe key; returns undefined for an event type the ledger does
 * not record (Open, Click, Subscription).
 */
export function parseSesEvent(message: unknown): ParsedSesEvent | undefined {
  if (!isObject(message)) throw new InvalidSesEventError('message', 'is not a JSON object');
  // SES writes `eventType` for configuration-set events, `notificationType` for identity notifications.
  const type = typeof message.eventType === 'string' ? message.eventType : message.notificationType;
  if (typeof type !== 'string' || type === '') throw new InvalidSesEventError('eventType', 'is missing');
  const status = statusOfType(type);
  if (status === undefined) return undefined;
  const mail = field(message, 'mail', 'mail');
  const sesMessageId = text(mail, 'messageId', 'mail.messageId');
  const objectName = Object.hasOwn(EVENT_OBJECT, type) ? (EVENT_OBJECT[type] ?? '') : '';
  const body = objectName !== '' && isObject(message[objectName]) ? (message[objectName] as Json) : undefined;
  const at =
    body && typeof body.timestamp === 'string'
      ? isoTime(body, 'timestamp', `${objectName}.timestamp`)
      : isoTime(mail, 'timestamp', 'mail.timestamp');
  const tags = mail.tags === undefined ? {} : mail.tags;
  if (!isObject(tags)) throw new InvalidSesEventError('mail.tags', 'is not an object');
  if (!Object.hasOwn(tags, DEDUPE_KEY_TAG)) throw new UntaggedSesEventError(sesMessageId);
  const key = tagValue(tags, DEDUPE_KEY_TAG);
  if (key === undefined) {
    throw new InvalidSesEventError(`mail.tags.${DEDUPE_KEY_TAG}`, 'is not a list of one non-empty string');
  }
  const attemptId = tagValue(tags, DEDUPE_ATTEMPT_TAG);
  const claimRef = tagValue(tags, DEDUPE_CLAIM_TAG);
  const team = tagValue(tags, DEDUPE_TEAM_TAG);
  const teamKey = tagValue(tags, DEDUPE_TEAM_KEY_TAG);
  const accountId = typeof mail.sendingAccountId === 'string' ? mail.sendingAccountId : undefined;
  const configurationSet = tagValue(tags, 'ses:configuration-set');
  const callerIdentity = tagValue(tags, 'ses:caller-identity');
  const detail = detailOf(type, body);
  return {
    key,
    status,
    id: `${type}#${sesMessageId}#${at}`,
    event: { type, at, sesMessageId, ...(detail ? { detail } : {}), ...(attemptId ? { attemptId } : {}) },
    ...(attemptId ? { attemptId } : {}),
    ...(claimRef ? { claimRef } : {}),
    ...(team ? { team } : {}),
    ...(team && teamKey ? { teamKey } : {}),
    origin: {
      ...(accountId ? { accountId } : {}),
      ...(configurationSet ? { configurationSet } : {}),
      ...(callerIdentity ? { callerIdentity } : {}),
    },
  };
}

/** The highest-ranked status of these events (undefined for none). */
export function statusOf(events: readonly LedgerEvent[]): LedgerStatus | undefined {
  let best: LedgerStatus | undefined;
  for (const event of sinceLastResend(events)) {
    const status = statusOfRecorded(event.type);
    if (status && (best === undefined || STATUS_RANK[status] > STATUS_RANK[best])) best = status;
  }
  return best;
}

/**
 * The events after the key's last `Resend` (an operator sent the key again on purpose): the
 * status is theirs alone, the earlier ones stay in the timeline as history. All when there is none.
 */
export function sinceLastResend(events: readonly LedgerEvent[]): readonly LedgerEvent[] {
  let last = -1;
  events.forEach((event, i) => {
    if (event.type === RESEND_EVENT_TYPE && (last < 0 || event.at >= (events[last]?.at ?? ''))) last = i;
  });
  if (last < 0) return events;
  const at = events[last]?.at ?? '';
  return events.filter((event) => event.at > at);
}

/** Timeline order: by time, then by status rank, then by type (a total order, so any arrival order sorts the same). */
export function compareEvents(a: LedgerEvent, b: LedgerEvent): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  const ra = STATUS_RANK[statusOfRecorded(a.type) ?? 'sent'];
  const rb = STATUS_RANK[statusOfRecorded(b.type) ?? 'sent'];
  if (ra !== rb) return ra - rb;
  const ka = `${a.type}#${a.sesMessageId ?? ''}#${a.detail ?? ''}`;
  const kb = `${b.type}#${b.sesMessageId ?? ''}#${b.detail ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The id of a recorded event (as {@link ParsedSesEvent.id}). */
export function eventId(event: LedgerEvent): string {
  return `${event.type}#${event.sesMessageId ?? ''}#${event.at}`;
}

/** The ledger item's fields that follow from its events alone. */
export interface Derived {
  readonly status: LedgerStatus;
  readonly sesMessageId: string;
  readonly events: readonly LedgerEvent[];
  /** The latest event's time. */
  readonly updatedAt: string;
  /** The latest event's time plus the retention, in epoch seconds. */
  readonly expiration: number;
}

/**
 * What an item holds once `incoming` is recorded on top of `existing` events: the same result
 * for any order and any number of copies of the same events. `sesMessageId` is the Send's (the
 * first event's when there is no Send).
 */
export function merge(
  existing: readonly LedgerEvent[],
  incoming: LedgerEvent,
  retentionSeconds: number,
): Derived | undefined {
  const ids = new Set(existing.map(eventId));
  if (ids.has(eventId(incoming))) return undefined;
  const events = [...existing, incoming].sort(compareEvents);
  const status = statusOf(events) ?? 'sent';
  const current = sinceLastResend(events);
  const send =
    current.find((e) => e.type === 'Send') ??
    current.find((e) => e.sesMessageId !== undefined) ??
    events.find((e) => e.sesMessageId !== undefined);
  const last = events[events.length - 1] ?? incoming;
  return {
    status,
    sesMessageId: send?.sesMessageId ?? '',
    events,
    updatedAt: last.at,
    expiration: Math.floor(Date.parse(last.at) / 1000) + retentionSeconds,
  };
}

/** True when `status` is one the ledger records. */
export function isLedgerStatus(status: unknown): status is LedgerStatus {
  return typeof status === 'string' && (LEDGER_STATUSES as readonly string[]).includes(status);
}

/** A ledger item's events, whatever the stored shape. */
export function eventsOf(item: Partial<LedgerItem> | undefined): readonly LedgerEvent[] {
  return Array.isArray(item?.events) ? item.events : [];
}
