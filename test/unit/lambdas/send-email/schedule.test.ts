import type { SQSRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ledgerKey } from '../../../../lambdas/kernel/ledger/schema';
import { InvalidMessageError } from '../../../../lambdas/kernel/contract';
import { RetryableError } from '../../../../lambdas/kernel/errors';
import { RETRY_ATTRIBUTE } from '../../../../lambdas/kernel/names';
import type { TeamRoutes } from '../../../../lambdas/kernel/teams';
import { parseRecord } from '../../../../lambdas/send-email/parse';
import { createSchedule, hopDelaySeconds, ledgerRecordScheduled } from '../../../../lambdas/send-email/schedule';
import { planRetry, retryState, scheduledState } from '../../../../lambdas/send-email/outcome/retry-budget';
import { envelopeBody, sqsRecord, TOPIC_ARN, validMessage } from '../../helpers';

const NOW = Date.UTC(2026, 11, 24, 8, 0, 0);
const DAY = 86_400;

const WORK_QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:q';
const HIGH_QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:q-high';

/** A copy of the order-42 message with `sendAt` (none when undefined), from `source`. */
function record(
  sendAt: string | undefined,
  attributes: Record<string, string> = {},
  sentAt = NOW,
  source = WORK_QUEUE_ARN,
): SQSRecord {
  const message = sendAt === undefined ? validMessage : { ...validMessage, sendAt };
  return sqsRecord({
    body: JSON.stringify(envelopeBody(message, { key: 'order-42' })),
    sentAt,
    messageAttributes: attributes,
    eventSourceARN: source,
  });
}

function harness(
  options: { now?: number; failSend?: boolean; maxAhead?: number; sourceQueueUrl?: string; teams?: TeamRoutes } = {},
) {
  const sent: SendMessageCommand[] = [];
  const scheduled: [string, string, string][] = [];
  const metrics: string[] = [];
  const schedule = createSchedule({
    settings: {
      scheduleQueueUrl: 'https://sqs/q-schedule',
      highPriorityQueueUrl: 'https://sqs/123456789012/q-high',
      maxScheduleAheadSeconds: options.maxAhead ?? DAY,
      sourceQueueUrl: options.sourceQueueUrl ?? 'https://sqs/123456789012/q-work',
      ...(options.teams ? { teams: options.teams } : {}),
    },
    sqs: {
      send: async (command) => {
        if (options.failSend) throw new Error('SQS is down');
        sent.push(command as SendMessageCommand);
        return {};
      },
    },
    logger: { info: () => undefined, warn: () => undefined } as unknown as Logger,
    metrics: { addMetric: (name: string) => metrics.push(name) } as unknown as Metrics,
    now: () => options.now ?? NOW,
    recordScheduled: async (key, sendAt, at) => {
      scheduled.push([key, sendAt, at]);
    },
  });
  const run = (r: SQSRecord) => schedule(r, parseRecord(r, TOPIC_ARN));
  return { run, sent, scheduled, metrics };
}

describe('schedule stage: a message is never sent before its sendAt', () => {
  test('a message without sendAt is due at once, and nothing is enqueued', async () => {
    const h = harness();
    await expect(h.run(record(undefined))).resolves.toBe('due');
    expect(h.sent).toHaveLength(0);
  });

  test('a sendAt that has passed (or is now) is due: the record goes on to its claim', async () => {
    const h = harness();
    await expect(h.run(record('2026-12-24T08:00:00Z'))).resolves.toBe('due');
    await expect(h.run(record('2026-12-24T07:00:00Z'))).resolves.toBe('due');
    expect(h.sent).toHaveLength(0);
  });

  test('one millisecond before sendAt is not due: the record is deferred, never claimed', async () => {
    const h = harness({ now: NOW - 1 });
    await expect(h.run(record('2026-12-24T08:00:00Z', {}, NOW - 10_000))).resolves.toBe('deferred');
    expect(h.sent[0]?.input.DelaySeconds).toBe(1);
  });

  test('a sendAt 30 s ahead hops once for 30 s; one 2 h ahead hops for SQS’s 900 s at most', async () => {
    const h = harness();
    await h.run(record('2026-12-24T08:00:30Z'));
    await h.run(record('2026-12-24T10:00:00Z'));
    expect(h.sent.map((c) => c.input.DelaySeconds)).toEqual([30, 900]);
    expect(hopDelaySeconds(NOW + 30_500, NOW)).toBe(31);
  });

  test('the copy waits in the schedule queue, never the lane’s own queue, and names its sendAt and lane', async () => {
    const h = harness();
    await h.run(record('2026-12-24T10:00:00Z'));
    await h.run(record('2026-12-24T10:00:00Z', {}, NOW, HIGH_QUEUE_ARN));
    expect(h.sent.map((c) => c.input.QueueUrl)).toEqual(['https://sqs/q-schedule', 'https://sqs/q-schedule']);
    expect(h.sent.map((c) => c.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleLane]?.StringValue)).toEqual([
      'normal',
      'high',
    ]);
    expect(h.sent[0]?.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleSendAt]?.StringValue).toBe(
      String(Date.parse('2026-12-24T10:00:00Z')),
    );
  });

  test("a copy from a team's queue names the team, whose queue it goes back to; one from the work queue names none", async () => {
    const teams: TeamRoutes = {
      billing: { topicArn: TOPIC_ARN, queueUrl: 'https://sqs/123456789012/q-t-billing', senders: ['b@x'] },
    };
    const team = harness({ teams, sourceQueueUrl: 'https://sqs/123456789012/q-t-billing' });
    await team.run(record('2026-12-24T10:00:00Z'));
    const work = harness({ teams });
    await work.run(record('2026-12-24T10:00:00Z'));
    const named = (h: { sent: SendMessageCommand[] }) =>
      h.sent.map((c) => c.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleTeam]?.StringValue);
    expect(named(team)).toEqual(['billing']);
    expect(named(work)).toEqual([undefined]);
  });

  test('a copy back early from the schedule queue goes back there for the seconds left, not recorded again', async () => {
    const h = harness();
    const early = record('2026-12-24T08:00:05Z', {
      [RETRY_ATTRIBUTE.scheduleHop]: '3',
      [RETRY_ATTRIBUTE.scheduleLane]: 'normal',
      [RETRY_ATTRIBUTE.scheduleSendAt]: String(NOW + 5000),
    });
    await expect(h.run(early)).resolves.toBe('deferred');
    expect(h.sent[0]?.input).toMatchObject({ QueueUrl: 'https://sqs/q-schedule', DelaySeconds: 5 });
    expect(h.sent[0]?.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.StringValue).toBe('4');
    expect(h.scheduled).toHaveLength(0);
  });

  test('the hop keeps the body and the publisher’s attributes, the first-enqueue time, and counts hops', async () => {
    const h = harness();
    const first = record('2026-12-24T10:00:00Z', { 'idempotency-key': 'order-42' }, NOW - 5000);
    await h.run(first);
    const copy = h.sent[0]?.input;
    expect(copy?.QueueUrl).toBe('https://sqs/q-schedule');
    expect(copy?.MessageBody).toBe(first.body);
    expect(copy?.MessageAttributes?.['idempotency-key']?.StringValue).toBe('order-42');
    expect(copy?.MessageAttributes?.[RETRY_ATTRIBUTE.firstEnqueuedAt]?.StringValue).toBe(String(NOW - 5000));
    expect(copy?.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.StringValue).toBe('1');

    await h.run(
      record('2026-12-24T10:00:00Z', {
        [RETRY_ATTRIBUTE.scheduleHop]: '1',
        [RETRY_ATTRIBUTE.firstEnqueuedAt]: String(NOW - 5000),
      }),
    );
    expect(h.sent[1]?.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.StringValue).toBe('2');
    expect(h.sent[1]?.input.MessageAttributes?.[RETRY_ATTRIBUTE.firstEnqueuedAt]?.StringValue).toBe(String(NOW - 5000));
  });

  test('only the first deferral records the key as scheduled in the ledger', async () => {
    const h = harness();
    await h.run(record('2026-12-24T10:00:00Z'));
    await h.run(record('2026-12-24T10:00:00Z', { [RETRY_ATTRIBUTE.scheduleHop]: '1' }));
    expect(h.scheduled).toEqual([['order-42', '2026-12-24T10:00:00Z', '2026-12-24T08:00:00.000Z']]);
    expect(h.metrics.filter((m) => m === 'EmailsScheduled')).toHaveLength(1);
    expect(h.metrics.filter((m) => m === 'ScheduleHops')).toHaveLength(2);
  });

  test('a sendAt further ahead than maxScheduleAheadSeconds from when it reached the queue is permanent', async () => {
    const h = harness();
    const error = await h.run(record('2026-12-25T08:00:01Z')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as InvalidMessageError).code).toBe('SendAtOutOfRange');
    expect((error as InvalidMessageError).message).toContain('sendAt: must be at most 86400 s');
    expect((error as InvalidMessageError).dedupeKey).toBe('order-42');
    expect(h.sent).toHaveLength(0);
  });

  test('the range is measured from the first enqueue, so later hops of an accepted message stay accepted', async () => {
    const h = harness({ now: NOW + 3_600_000 });
    const hop = record('2026-12-25T08:00:00Z', { [RETRY_ATTRIBUTE.firstEnqueuedAt]: String(NOW) }, NOW + 3_600_000);
    await expect(h.run(hop)).resolves.toBe('deferred');
  });

  test('with maxScheduleAheadSeconds=0 a future sendAt is refused, a past one sent', async () => {
    const h = harness({ maxAhead: 0 });
    await expect(h.run(record('2026-12-24T08:00:01Z'))).rejects.toThrow('does not schedule');
    await expect(h.run(record('2026-12-24T08:00:00Z'))).resolves.toBe('due');
  });

  test('a hop that cannot be enqueued is retryable: the record is retried, not lost and not sent', async () => {
    const h = harness({ failSend: true });
    const error = await h.run(record('2026-12-24T10:00:00Z')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe('ScheduleHopFailed');
    expect(h.scheduled).toHaveLength(0);
  });
});

describe('retry budget of a scheduled message', () => {
  test('starts at its sendAt: a message that waited 23 h for its time is not dead-lettered as RetryBudgetExhausted', () => {
    const sendAt = '2026-12-24T08:00:00Z';
    const firstEnqueued = NOW - 23 * 3_600_000;
    const state = retryState(
      record(sendAt, { [RETRY_ATTRIBUTE.firstEnqueuedAt]: String(firstEnqueued) }),
      NOW + 60_000,
    );
    // Counted from the first enqueue, a 1 h budget would be spent long ago.
    expect(planRetry(state, 10, 3600, NOW + 60_000).kind).toBe('exhausted');
    const scheduled = scheduledState(state, sendAt);
    expect(scheduled.firstEnqueuedAt).toBe(NOW);
    expect(planRetry(scheduled, 10, 3600, NOW + 60_000)).toEqual({ kind: 'retry', delaySeconds: 10, nextAttempt: 1 });
  });

  test('is spent after the budget past sendAt, as any other message’s', () => {
    const state = scheduledState(retryState(record('2026-12-24T08:00:00Z'), NOW), '2026-12-24T08:00:00Z');
    expect(planRetry(state, 10, 3600, NOW + 3_600_001).kind).toBe('exhausted');
  });

  test('a message without sendAt, or one published after its sendAt, keeps its first-enqueue time', () => {
    const state = retryState(record(undefined, {}, NOW), NOW);
    expect(scheduledState(state, undefined)).toBe(state);
    expect(scheduledState(state, '2026-12-24T07:00:00Z')).toBe(state);
  });
});

test("the Scheduled write of a team's key names its team and key as written; a bare key's names none", async () => {
  const writes: UpdateItemCommand[] = [];
  const dynamodb = { send: async (command: UpdateItemCommand) => (writes.push(command), {}) } as never;
  const record = ledgerRecordScheduled(dynamodb, 'Ledger', 3600, ['billing']);
  await record('billing#order-42', '2026-12-24T08:00:00.000Z', '2026-12-23T08:00:00.000Z');
  await record('order-42', '2026-12-24T08:00:00.000Z', '2026-12-23T08:00:00.000Z');
  expect(writes[0]?.input.Key).toEqual({ key: { S: ledgerKey('billing#order-42') } });
  expect(unmarshall(writes[0]?.input.ExpressionAttributeValues ?? {})).toMatchObject({
    ':status': 'scheduled',
    ':team': 'billing',
    ':teamKey': 'order-42',
  });
  expect(writes[1]?.input.UpdateExpression).not.toContain('team');
});
