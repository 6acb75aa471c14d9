/**
 * Callback messages per Standard Webhooks: the reference library (`standardwebhooks`) verifies
 * what webhook.ts signs, with one key and during a rotation with either; the id is stable per
 * status change and the body names the event that set the status.
 */
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  callbackBody,
  deadLetterReport,
  secretBytes,
  statusEvent,
  webhookHeaders,
  webhookId,
  type PublishedReport,
} from '../../../../../lambdas/kernel/callbacks/webhook';

const secret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const report: PublishedReport = {
  key: 'order-42',
  status: 'bounced',
  sesMessageId: 'ses-1',
  events: [
    { type: 'Send', at: '2026-12-04T10:00:00.000Z', sesMessageId: 'ses-1' },
    { type: 'Delivery', at: '2026-12-04T10:00:01.000Z', sesMessageId: 'ses-1' },
    { type: 'Bounce', at: '2026-12-04T10:00:02.000Z', sesMessageId: 'ses-1', detail: 'Permanent/General' },
  ],
  sequence: 3,
};

describe('signing', () => {
  test('the reference library verifies a request, and refuses it under another secret or another body', () => {
    const key = secret();
    const body = JSON.stringify(callbackBody(report));
    const headers = webhookHeaders([key], webhookId(report), body, Date.now());
    expect(new Webhook(key).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(key).verify(body.replace('bounced', 'delivered'), headers)).toThrow(
      WebhookVerificationError,
    );
  });

  test('during a rotation both keys sign: a receiver with either verifies', () => {
    const current = secret();
    const previous = secret();
    const body = '{"type":"email.delivered"}';
    const headers = webhookHeaders([current, previous], 'msg_x', body, Date.now());
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toBeDefined();
    expect(new Webhook(previous).verify(body, headers)).toBeDefined();
  });

  test('a bare base64 key (as Secrets Manager keeps it) signs as its whsec_ form', () => {
    const bare = 'A'.repeat(40);
    const body = '{}';
    const headers = webhookHeaders([bare], 'msg_y', body, Date.now());
    expect(new Webhook(`whsec_${bare}`).verify(body, headers)).toEqual({});
  });

  test('a key under 24 bytes is refused', () => {
    expect(() => secretBytes(`whsec_${randomBytes(16).toString('base64')}`)).toThrow('at least 24 bytes');
  });

  test("the timestamp is the try's own, in seconds", () => {
    const headers = webhookHeaders([secret()], 'msg_z', '{}', 1_700_000_000_999);
    expect(headers['webhook-timestamp']).toBe('1700000000');
  });
});

describe('webhookId', () => {
  test('one status change has one id, whatever the events recorded since', () => {
    const later = { ...report, events: [...report.events, { type: 'Delivery', at: '2026-12-04T10:00:03.000Z' }] };
    expect(webhookId(later)).toBe(webhookId(report));
    expect(webhookId(report)).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  });

  test('another status, team or key, or a resend, is another id', () => {
    const ids = new Set([
      webhookId(report),
      webhookId({ ...report, status: 'delivered' }),
      webhookId({ ...report, team: 'billing' }),
      webhookId({ ...report, key: 'order-43' }),
      webhookId({ ...report, events: [...report.events, { type: 'Resend', at: '2026-12-04T11:00:00.000Z' }] }),
    ]);
    expect(ids.size).toBe(5);
  });
});

test('a dead letter that comes again (redriven, failed again) is another id; a copy of one is the same', () => {
  const first = deadLetterReport('order-42', undefined, '2026-12-04T10:00:00.000Z', 'InvalidMessage', 2);
  const again = deadLetterReport('order-42', undefined, '2026-12-04T11:00:00.000Z', 'InvalidMessage', 4);
  expect(webhookId(first)).toBe(webhookId({ ...first }));
  expect(webhookId(again)).not.toBe(webhookId(first));
  expect(callbackBody(first)).toMatchObject({
    type: 'email.dead-lettered',
    data: { status: 'dead-lettered', sequence: 2, event: { type: 'DeadLettered', detail: 'InvalidMessage' } },
  });
});

describe('callbackBody', () => {
  test('names the status, its event with the bounce detail, the sequence and the SES message id', () => {
    expect(callbackBody({ ...report, team: 'billing' })).toEqual({
      type: 'email.bounced',
      timestamp: '2026-12-04T10:00:02.000Z',
      data: {
        key: 'order-42',
        team: 'billing',
        status: 'bounced',
        sequence: 3,
        sesMessageId: 'ses-1',
        event: { type: 'Bounce', at: '2026-12-04T10:00:02.000Z', sesMessageId: 'ses-1', detail: 'Permanent/General' },
      },
    });
  });

  test("a team's key is named as its publisher wrote it, the ledger's hash beside it", () => {
    const body = callbackBody({ ...report, key: 'sha256-abc', team: 'billing', teamKey: 'order-42' });
    expect(body.data).toMatchObject({ key: 'order-42', team: 'billing', ledgerKey: 'sha256-abc' });
    expect(callbackBody(report).data).not.toHaveProperty('ledgerKey');
  });

  test("the status's own event, not the latest one (a late Delivery after a Complaint)", () => {
    const events = [
      { type: 'Complaint', at: '2026-12-04T10:00:05.000Z', detail: 'abuse' },
      { type: 'Delivery', at: '2026-12-04T10:00:06.000Z' },
    ];
    expect(statusEvent({ status: 'complained', events })?.type).toBe('Complaint');
    expect(statusEvent({ status: 'cancelled', events: [{ type: 'Cancelled', at: 'x' }] })?.type).toBe('Cancelled');
  });
});
