/**
 * The ledger's pure part: reading SES events as EventBridge delivers them, the status order,
 * and the merge that makes the item the same for any arrival order and any copies.
 */
import {
  InvalidSesEventError,
  merge,
  parseSesEvent,
  readEventBridgeEnvelope,
  SES_DETAIL_TYPES,
  statusOf,
  UntaggedSesEventError,
  type Derived,
} from '../../../../../lambdas/kernel/ledger/events';
import type { LedgerEvent } from '../../../../../lambdas/kernel/ledger/schema';
import { eventBridgeEnvelope } from '../../../../../tools/dev/local/event-bus';
import { permutations } from '../../../helpers';

/** An SES event as SES publishes it to any event destination (EventBridge's detail) (trimmed to the fields we read and a few more). */
function sesEvent(
  type: string,
  extra: Record<string, unknown> = {},
  key = 'order-42-shipped',
): Record<string, unknown> {
  return {
    eventType: type,
    mail: {
      timestamp: '2026-12-01T10:00:00.000Z',
      source: 'sender@example.com',
      messageId: '0100018c-aaaa-bbbb',
      destination: ['ada@example.com'],
      tags: { 'ses:configuration-set': ['email-pipeline'], 'dedupe-key': [key] },
    },
    ...extra,
  };
}

const SEND = sesEvent('Send', { send: {} });
const DELIVERY = sesEvent('Delivery', {
  delivery: { timestamp: '2026-12-01T10:00:02.000Z', recipients: ['ada@example.com'], smtpResponse: '250 ok' },
});
const BOUNCE = sesEvent('Bounce', {
  bounce: {
    bounceType: 'Permanent',
    bounceSubType: 'General',
    bouncedRecipients: [{ emailAddress: 'ada@example.com' }],
    timestamp: '2026-12-01T10:00:03.000Z',
  },
});
const COMPLAINT = sesEvent('Complaint', {
  complaint: {
    complainedRecipients: [{ emailAddress: 'ada@example.com' }],
    complaintFeedbackType: 'abuse',
    timestamp: '2026-12-01T10:05:00.000Z',
  },
});
const DELAY = sesEvent('DeliveryDelay', {
  deliveryDelay: { delayType: 'TransientCommunicationFailure', timestamp: '2026-12-01T10:00:01.000Z' },
});

function parsed(message: unknown) {
  const result = parseSesEvent(message);
  if (!result) throw new Error('expected a recorded event type');
  return result;
}

/** Records events one by one through merge, as the table would. */
function recordAll(events: readonly LedgerEvent[]): Derived | undefined {
  let state: Derived | undefined;
  for (const event of events) state = merge(state?.events ?? [], event, 3600) ?? state;
  return state;
}

describe('parseSesEvent', () => {
  test('reads key, type, time, MessageId and a recipient-free detail', () => {
    expect(parsed(SEND)).toEqual({
      key: 'order-42-shipped',
      status: 'sent',
      id: 'Send#0100018c-aaaa-bbbb#2026-12-01T10:00:00.000Z',
      event: { type: 'Send', at: '2026-12-01T10:00:00.000Z', sesMessageId: '0100018c-aaaa-bbbb' },
      origin: { configurationSet: 'email-pipeline' },
    });
    expect(parsed(BOUNCE).event).toEqual({
      type: 'Bounce',
      at: '2026-12-01T10:00:03.000Z',
      sesMessageId: '0100018c-aaaa-bbbb',
      detail: 'Permanent/General',
    });
    expect(JSON.stringify(parsed(COMPLAINT))).not.toContain('ada@example.com');
  });

  test.each([
    ['Send', 'sent'],
    ['DeliveryDelay', 'delayed'],
    ['Delivery', 'delivered'],
    ['Bounce', 'bounced'],
    ['Complaint', 'complained'],
    ['Reject', 'rejected'],
    ['Rendering Failure', 'rejected'],
  ])('%s means %s', (type, status) => {
    expect(parsed(sesEvent(type)).status).toBe(status);
  });

  test('event types the ledger does not record are skipped', () => {
    expect(parseSesEvent(sesEvent('Open'))).toBeUndefined();
    expect(parseSesEvent(sesEvent('Click'))).toBeUndefined();
  });

  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'an eventType of %s is no event type (looked up without the prototype)',
    (type) => {
      expect(parseSesEvent(JSON.parse(JSON.stringify(sesEvent(type))))).toBeUndefined();
      expect(statusOf([{ type, at: '2026-12-01T10:00:00.000Z' }])).toBeUndefined();
    },
  );

  test('reads where the event came from, and the send attempt it is tagged with', () => {
    const event = sesEvent('Send', { send: {} });
    const mail = event.mail as Record<string, unknown>;
    mail.sendingAccountId = '123456789012';
    mail.tags = {
      ...(mail.tags as object),
      'ses:caller-identity': ['send-role'],
      'dedupe-attempt': ['a1'],
      'dedupe-claim': ['c1'],
    };
    const result = parsed(event);
    expect(result.origin).toEqual({
      accountId: '123456789012',
      configurationSet: 'email-pipeline',
      callerIdentity: 'send-role',
    });
    expect([result.attemptId, result.claimRef, result.event.attemptId]).toEqual(['a1', 'c1', 'a1']);
    expect(result).not.toHaveProperty('team');
  });

  test("reads the team a team's send is tagged with (dedupe-team)", () => {
    const event = sesEvent('Delivery', { delivery: {} });
    const mail = event.mail as Record<string, unknown>;
    mail.tags = { ...(mail.tags as object), 'dedupe-team': ['billing'] };
    expect(parsed(event).team).toBe('billing');
    expect(parsed(event)).not.toHaveProperty('teamKey');
    mail.tags = { ...(mail.tags as object), 'dedupe-team-key': ['order-42'] };
    expect(parsed(event)).toMatchObject({ team: 'billing', teamKey: 'order-42' });
  });

  test("a team key tag without a team tag is not read (it names no team's key)", () => {
    const event = sesEvent('Delivery', { delivery: {} });
    const mail = event.mail as Record<string, unknown>;
    mail.tags = { ...(mail.tags as object), 'dedupe-team-key': ['order-42'] };
    expect(parsed(event)).not.toHaveProperty('teamKey');
  });

  test.each([
    ['a number', '0'],
    ['a date without a time', '2026-12-01'],
    ['a six-digit year', '+275760-09-13T00:00:00.000Z'],
    ['a year before SES', '1970-01-01T00:00:00Z'],
    ['a year past 2100', '2100-01-01T00:00:00Z'],
    ['an impossible day', '2026-02-31T00:00:00Z'],
    ['free text', 'yesterday'],
  ])('a timestamp that is %s is refused', (_, timestamp) => {
    const event = { eventType: 'Send', mail: { messageId: 'm', timestamp, tags: { 'dedupe-key': ['k'] } } };
    expect(() => parseSesEvent(event)).toThrow(/^SES event: mail\.timestamp is not/);
  });

  test('an RFC 3339 timestamp with an offset is read as UTC', () => {
    const event = {
      eventType: 'Send',
      mail: { messageId: 'm', timestamp: '2026-12-01T11:00:00+01:00', tags: { 'dedupe-key': ['k'] } },
    };
    expect(parsed(event).event.at).toBe('2026-12-01T10:00:00.000Z');
  });

  test.each([
    ['not an object', 'x', 'message'],
    ['no eventType', { mail: {} }, 'eventType'],
    ['no mail', { eventType: 'Send' }, 'mail'],
    ['no messageId', { eventType: 'Send', mail: { timestamp: '2026-12-01T10:00:00Z', tags: {} } }, 'mail.messageId'],
    ['a bad timestamp', { eventType: 'Send', mail: { messageId: 'm', timestamp: 'yesterday' } }, 'mail.timestamp'],
    [
      'an empty key tag',
      { eventType: 'Send', mail: { messageId: 'm', timestamp: '2026-12-01T10:00:00Z', tags: { 'dedupe-key': [] } } },
      'mail.tags.dedupe-key',
    ],
  ])('%s is refused, naming the field', (_, message, fieldName) => {
    expect(() => parseSesEvent(message)).toThrow(InvalidSesEventError);
    expect(() => parseSesEvent(message)).toThrow(new RegExp(`^SES event: ${fieldName.replace('.', '\\.')} `));
  });

  test('an email without the dedupe-key tag is told apart (another sender on the configuration set)', () => {
    const untagged = { eventType: 'Send', mail: { messageId: 'm-1', timestamp: '2026-12-01T10:00:00Z', tags: {} } };
    expect(() => parseSesEvent(untagged)).toThrow(UntaggedSesEventError);
  });

  test("EventBridge's envelope is opened: SES's event is its detail, its source and account say where it came from", () => {
    const envelope = eventBridgeEnvelope(SEND, { account: '111122223333', region: 'eu-west-1' });
    expect(envelope).toMatchObject({
      version: '0',
      'detail-type': 'Email Sent',
      source: 'aws.ses',
      region: 'eu-west-1',
    });
    expect(envelope.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(readEventBridgeEnvelope(JSON.stringify(envelope))).toEqual({
      origin: { source: 'aws.ses', busAccount: '111122223333' },
      message: SEND,
    });
  });

  test('anything but an EventBridge event is refused, naming why', () => {
    expect(() => readEventBridgeEnvelope('nope')).toThrow(/body is not JSON/);
    expect(() => readEventBridgeEnvelope(JSON.stringify(SEND))).toThrow(/not an EventBridge event/);
    expect(() =>
      readEventBridgeEnvelope(JSON.stringify({ Type: 'Notification', Message: JSON.stringify(SEND) })),
    ).toThrow(/not an EventBridge event/);
  });

  test('a detail-type that is not the one of the detail’s eventType is refused: a Send cannot pass as a Delivery', () => {
    const forged = { ...eventBridgeEnvelope(SEND), 'detail-type': 'Email Delivered' };
    expect(() => readEventBridgeEnvelope(JSON.stringify(forged))).toThrow(
      /detail-type is "Email Delivered", not the one of a Send event/,
    );
  });

  test('each SES event type has its EventBridge detail-type', () => {
    expect(SES_DETAIL_TYPES).toMatchObject({
      Send: 'Email Sent',
      Delivery: 'Email Delivered',
      Bounce: 'Email Bounced',
      Complaint: 'Email Complaint Received',
      Reject: 'Email Rejected',
      'Rendering Failure': 'Email Rendering Failed',
      DeliveryDelay: 'Email Delivery Delayed',
    });
  });
});

describe('status order and merge', () => {
  const lifecycle = [SEND, DELAY, DELIVERY, COMPLAINT].map((m) => parsed(m).event);

  test('a Delivery never goes back to sent; a Bounce after a Delivery wins; a Complaint after a Delivery wins', () => {
    const [send, , delivery, complaint] = lifecycle as [LedgerEvent, LedgerEvent, LedgerEvent, LedgerEvent];
    expect(statusOf([delivery, send])).toBe('delivered');
    expect(statusOf([send, delivery, parsed(BOUNCE).event])).toBe('bounced');
    expect(statusOf([send, delivery, complaint])).toBe('complained');
  });

  test('every arrival order of the same events gives the same item', () => {
    const inOrder = recordAll(lifecycle);
    expect(inOrder?.status).toBe('complained');
    expect(inOrder?.events.map((e) => e.type)).toEqual(['Send', 'DeliveryDelay', 'Delivery', 'Complaint']);
    expect(inOrder?.updatedAt).toBe('2026-12-01T10:05:00.000Z');
    const orders = permutations(lifecycle);
    expect(orders).toHaveLength(24);
    for (const order of orders) expect(recordAll(order)).toEqual(inOrder);
  });

  test('copies of events change nothing, in any order', () => {
    const events = [SEND, DELIVERY, BOUNCE].map((m) => parsed(m).event);
    const once = recordAll(events);
    for (const order of permutations([...events, ...events])) expect(recordAll(order)).toEqual(once);
    expect(merge(once?.events ?? [], parsed(DELIVERY).event, 3600)).toBeUndefined();
  });

  test('the item expires with the retention after its latest event', () => {
    const item = recordAll(lifecycle);
    expect(item?.expiration).toBe(Date.parse('2026-12-01T10:05:00.000Z') / 1000 + 3600);
  });
});

describe('a Resend (email-pipeline resend) starts the status over; the timeline keeps the history', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, s)).toISOString();
  const rejected = { type: 'Rendering Failure', at: at(1), sesMessageId: 'm-1' };
  const resend = { type: 'Resend', at: at(5), detail: 'by ada: template fixed' };
  const send = { type: 'Send', at: at(7), sesMessageId: 'm-2' };
  const delivery = { type: 'Delivery', at: at(9), sesMessageId: 'm-2' };

  test('statusOf counts only what came after the last Resend', () => {
    expect(statusOf([rejected, resend])).toBeUndefined();
    expect(statusOf([rejected, resend, send, delivery])).toBe('delivered');
    expect(statusOf([rejected, send])).toBe('rejected');
  });

  test('merge takes the status and the SES message id of the new send, in any order', () => {
    let state = merge([rejected, resend], delivery, 3600);
    state = merge(state?.events ?? [], send, 3600) ?? state;
    expect(state).toMatchObject({ status: 'delivered', sesMessageId: 'm-2' });
    expect(state?.events.map((e) => e.type)).toEqual(['Rendering Failure', 'Resend', 'Send', 'Delivery']);
  });
});
