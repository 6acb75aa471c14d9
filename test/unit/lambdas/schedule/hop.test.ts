import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import { RETRY_ATTRIBUTE } from '../../../../lambdas/kernel/names';
import { copyFor, createScheduleHandler, decideHop } from '../../../../lambdas/schedule/hop';
import { sqsRecord } from '../../helpers';

const NOW = Date.UTC(2026, 11, 24, 8, 0, 0);
const SETTINGS = {
  scheduleQueueUrl: 'https://sqs/1/schedule',
  workQueueUrl: 'https://sqs/1/work',
  highPriorityQueueUrl: 'https://sqs/1/high',
};

/** A copy in the schedule queue with these String message attributes. */
function record(attributes: Record<string, string>): SQSRecord {
  return sqsRecord({
    body: '{"Type":"Notification","Message":"{}"}',
    sentAt: NOW,
    messageAttributes: attributes,
    eventSourceARN: 'arn:aws:sqs:eu-west-1:1:schedule',
  });
}

/** A copy as the send function puts it into the schedule queue. */
function waiting(sendAtMs: number, lane = 'normal', hop = '1'): SQSRecord {
  return record({
    [RETRY_ATTRIBUTE.firstEnqueuedAt]: String(NOW - 60_000),
    [RETRY_ATTRIBUTE.scheduleHop]: hop,
    [RETRY_ATTRIBUTE.scheduleSendAt]: String(sendAtMs),
    [RETRY_ATTRIBUTE.scheduleLane]: lane,
  });
}

describe('decideHop: a copy waits in the schedule queue until due, then goes to its lane', () => {
  test.each([
    ['30 s ahead', 30_000, 30],
    ['2 h ahead: SQS’s largest delay', 7_200_000, 900],
    ['1 ms ahead: rounded up, never early', 1, 1],
    ['900.5 s ahead', 900_500, 900],
  ])('%s waits one more hop of the seconds left', (_label, ahead, delay) => {
    expect(decideHop(waiting(NOW + ahead, 'normal', '2'), SETTINGS, NOW)).toEqual({
      kind: 'wait',
      queueUrl: SETTINGS.scheduleQueueUrl,
      delaySeconds: delay,
      hop: 3,
    });
  });

  test('a copy whose sendAt is now or past is due, to the work queue', () => {
    expect(decideHop(waiting(NOW), SETTINGS, NOW)).toMatchObject({ kind: 'due', queueUrl: SETTINGS.workQueueUrl });
    expect(decideHop(waiting(NOW - 5000), SETTINGS, NOW)).toMatchObject({ kind: 'due', lane: 'normal' });
  });

  test('a due copy of the high lane goes back to the high-priority queue', () => {
    expect(decideHop(waiting(NOW, 'high'), SETTINGS, NOW)).toEqual({
      kind: 'due',
      queueUrl: SETTINGS.highPriorityQueueUrl,
      lane: 'high',
      unreadable: false,
    });
  });

  test('an unknown lane, or the high lane without a high-priority queue, goes to the work queue', () => {
    expect(decideHop(waiting(NOW, 'urgent'), SETTINGS, NOW)).toMatchObject({ queueUrl: SETTINGS.workQueueUrl });
    const oneLane = { scheduleQueueUrl: SETTINGS.scheduleQueueUrl, workQueueUrl: SETTINGS.workQueueUrl };
    expect(decideHop(waiting(NOW, 'high'), oneLane, NOW)).toMatchObject({ queueUrl: SETTINGS.workQueueUrl });
  });

  test("a due copy from a team's queue goes back to that team's queue; a team without one, to the work queue", () => {
    const teams = {
      billing: { topicArn: 'arn:aws:sns:eu-west-1:1:billing', queueUrl: 'https://sqs/1/t-billing', senders: ['b@x'] },
      legacy: { topicArn: 'arn:aws:sns:eu-west-1:1:legacy', senders: ['l@x'] },
    };
    const withTeams = { ...SETTINGS, teams };
    const fromTeam = (team: string, lane = 'normal') =>
      record({
        [RETRY_ATTRIBUTE.scheduleSendAt]: String(NOW),
        [RETRY_ATTRIBUTE.scheduleLane]: lane,
        [RETRY_ATTRIBUTE.scheduleTeam]: team,
      });
    expect(decideHop(fromTeam('billing'), withTeams, NOW)).toMatchObject({
      kind: 'due',
      queueUrl: 'https://sqs/1/t-billing',
    });
    expect(decideHop(fromTeam('legacy'), withTeams, NOW)).toMatchObject({ queueUrl: SETTINGS.workQueueUrl });
    expect(decideHop(fromTeam('nobody'), withTeams, NOW)).toMatchObject({ queueUrl: SETTINGS.workQueueUrl });
    // The high lane stays the high lane: a team's high-priority topic feeds the high-priority queue.
    expect(decideHop(fromTeam('billing', 'high'), withTeams, NOW)).toMatchObject({
      queueUrl: SETTINGS.highPriorityQueueUrl,
    });
    // Still waiting: another hop in the schedule queue, whatever its team.
    const early = record({
      [RETRY_ATTRIBUTE.scheduleSendAt]: String(NOW + 5000),
      [RETRY_ATTRIBUTE.scheduleTeam]: 'billing',
    });
    expect(decideHop(early, withTeams, NOW)).toMatchObject({ kind: 'wait', queueUrl: SETTINGS.scheduleQueueUrl });
  });

  test.each([['none'], ['soon'], ['1.5e12'], ['-1']])(
    'a sendAt that does not read (%s) is forwarded to the work queue at once: the send function decides',
    (sendAt) => {
      const copy = record(
        sendAt === 'none'
          ? { [RETRY_ATTRIBUTE.scheduleLane]: 'high' }
          : { [RETRY_ATTRIBUTE.scheduleSendAt]: sendAt, [RETRY_ATTRIBUTE.scheduleLane]: 'high' },
      );
      expect(decideHop(copy, SETTINGS, NOW)).toEqual({
        kind: 'due',
        queueUrl: SETTINGS.workQueueUrl,
        lane: 'normal',
        unreadable: true,
      });
    },
  );

  test('a copy without a hop count counts its first hop here as 1', () => {
    const copy = record({ [RETRY_ATTRIBUTE.scheduleSendAt]: String(NOW + 60_000) });
    expect(decideHop(copy, SETTINGS, NOW)).toMatchObject({ kind: 'wait', hop: 1 });
  });
});

describe('copyFor', () => {
  test('a hop keeps the body and every attribute, moves the hop count on and sets the delay', () => {
    const copy = waiting(NOW + 60_000, 'high', '4');
    const input = copyFor(copy, decideHop(copy, SETTINGS, NOW)).input;
    expect(input).toMatchObject({ QueueUrl: SETTINGS.scheduleQueueUrl, MessageBody: copy.body, DelaySeconds: 60 });
    expect(input.MessageAttributes).toEqual({
      [RETRY_ATTRIBUTE.firstEnqueuedAt]: { DataType: 'String', StringValue: String(NOW - 60_000) },
      [RETRY_ATTRIBUTE.scheduleHop]: { DataType: 'String', StringValue: '5' },
      [RETRY_ATTRIBUTE.scheduleSendAt]: { DataType: 'String', StringValue: String(NOW + 60_000) },
      [RETRY_ATTRIBUTE.scheduleLane]: { DataType: 'String', StringValue: 'high' },
    });
  });

  test('a due copy goes without delay, with the first-enqueue time and hop count it came with', () => {
    const copy = waiting(NOW - 1, 'normal', '7');
    const input = copyFor(copy, decideHop(copy, SETTINGS, NOW)).input;
    expect(input.QueueUrl).toBe(SETTINGS.workQueueUrl);
    expect(input.DelaySeconds).toBeUndefined();
    expect(input.MessageBody).toBe(copy.body);
    expect(input.MessageAttributes?.[RETRY_ATTRIBUTE.firstEnqueuedAt]?.StringValue).toBe(String(NOW - 60_000));
    expect(input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.StringValue).toBe('7');
  });
});

describe('the schedule handler on a virtual clock', () => {
  function harness(failFor: readonly string[] = []) {
    let clock = NOW;
    const sent: SendMessageCommand[] = [];
    const logs: string[] = [];
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((line) => {
      logs.push(String(line));
      return true;
    });
    const handler = createScheduleHandler({
      settings: SETTINGS,
      sqs: {
        send: async (command) => {
          if (failFor.includes(command.input.MessageBody ?? '')) throw new Error('SQS is down');
          sent.push(command);
          return {};
        },
      },
      logger: new Logger({ serviceName: 'email-pipeline', logLevel: 'INFO' }),
      metrics: new Metrics({ namespace: 'Test', serviceName: 'email-pipeline' }),
      now: () => clock,
    });
    return {
      sent,
      logs,
      restore: () => stdout.mockRestore(),
      advance: (ms: number) => (clock += ms),
      run: (records: SQSRecord[]) => handler({ Records: records } as SQSEvent),
    };
  }

  test('a copy due in 2000 s hops 900 s, 900 s and 200 s, then goes to its lane once, never before its sendAt', async () => {
    const h = harness();
    try {
      const sendAt = NOW + 2_000_000;
      let copy = waiting(sendAt, 'high');
      const delays: number[] = [];
      for (;;) {
        await h.run([copy]);
        const next = h.sent[h.sent.length - 1]!;
        const input = next.input;
        if (input.QueueUrl !== SETTINGS.scheduleQueueUrl) break;
        delays.push(input.DelaySeconds!);
        h.advance(input.DelaySeconds! * 1000);
        copy = record(
          Object.fromEntries(Object.entries(input.MessageAttributes!).map(([k, v]) => [k, v.StringValue!])),
        );
      }
      expect(delays).toEqual([900, 900, 200]);
      expect(NOW + delays.reduce((a, b) => a + b, 0) * 1000).toBeGreaterThanOrEqual(sendAt);
      const forwarded = h.sent.filter((c) => c.input.QueueUrl !== SETTINGS.scheduleQueueUrl);
      expect(forwarded.map((c) => c.input.QueueUrl)).toEqual([SETTINGS.highPriorityQueueUrl]);
      expect(forwarded[0]?.input.MessageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.StringValue).toBe('4');
      // ScheduleHops counts each of the three hops (one metrics line per invocation).
      const hops = h.logs
        .filter((line) => line.includes('"ScheduleHops"'))
        .map((line) => (JSON.parse(line) as { ScheduleHops: number }).ScheduleHops);
      expect(hops).toEqual([1, 1, 1]);
    } finally {
      h.restore();
    }
  });

  test('a copy whose send fails is a batch item failure, the others of the batch go on', async () => {
    const h = harness(['body-2']);
    try {
      const records = [1, 2, 3].map((n) => ({ ...waiting(NOW + 60_000), messageId: `m-${n}`, body: `body-${n}` }));
      const response = await h.run(records);
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-2' }]);
      expect(h.sent.map((c) => c.input.MessageBody).sort()).toEqual(['body-1', 'body-3']);
      // Two hops made, counted once for the batch.
      const hops = h.logs.filter((line) => line.includes('"ScheduleHops"')).map((line) => JSON.parse(line));
      expect(hops).toEqual([expect.objectContaining({ ScheduleHops: 2 })]);
    } finally {
      h.restore();
    }
  });
});
