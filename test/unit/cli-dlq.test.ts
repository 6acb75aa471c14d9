/**
 * `email-pipeline dlq`: which options go with which subcommand, the codes never redriven, the
 * summary by code and what a selector matches.
 */
import { dlqOptions } from '../../lib/cli/dlq-command';
import { matches, neverRedriveReason, summarize } from '../../lib/dlq-select';
import type { DeadLetter } from '../../lib/dlq';

const io = { out: () => undefined };
const usage = (argv: string[]) => {
  try {
    dlqOptions(argv, io);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

test('selective and queue options parse', () => {
  expect(dlqOptions(['redrive', '--code', 'RetryBudgetExhausted', '--queue', 'subscription'], io)).toMatchObject({
    sub: 'redrive',
    options: { queue: 'subscription', code: 'RetryBudgetExhausted', force: false },
  });
  // The ledger DLQ holds SES events, not sends: no code or key to select by.
  expect(usage(['redrive', '--code', 'RetryBudgetExhausted', '--queue', 'ledger'])).toContain(
    '--code does not go with --queue ledger',
  );
  expect(dlqOptions(['redrive', '--queue', 'ledger', '--stall', '30'], io)?.options).toMatchObject({
    queue: 'ledger',
    stallSeconds: 30,
  });
  expect(dlqOptions(['delete', '--key', 'order-42'], io)?.options).toMatchObject({ queue: 'send', key: 'order-42' });
  expect(dlqOptions(['redrive', '--rate', '20', '--stack', 'S'], io)).toMatchObject({
    stack: 'S',
    options: { rate: 20 },
  });
  expect(dlqOptions(['list', '--summary', '--json'], io)?.options).toMatchObject({ summary: true, json: true });
});

test('what does not go together is a usage error naming it', () => {
  expect(usage(['delete'])).toContain('say which messages: dlq delete --key K');
  expect(usage(['purge', '--key', 'k'])).toContain('--key does not go with dlq purge');
  expect(usage(['list', '--summary', '--code', 'X'])).toContain('--summary counts every message by code');
  expect(usage(['redrive', '--rate', '10', '--key', 'k'])).toContain('--rate goes with the move task');
  expect(usage(['redrive', '--rate', '501'])).toContain('--rate is at most 500');
  expect(usage(['list', '--queue', 'ledgr'])).toContain('unknown queue "ledgr" (did you mean ledger?)');
  expect(usage(['cancel'])).toContain('dlq cancel --task HANDLE');
  expect(usage(['list', '--force'])).toContain('--force does not go with dlq list');
});

test('publisher-fault codes are never redriven, with the reason; retryable ones may be', () => {
  expect(neverRedriveReason('KeyReusedWithDifferentContent')).toContain('new key');
  expect(neverRedriveReason('InvalidMessage')).toContain('publisher must fix');
  expect(neverRedriveReason('ForeignTopic')).toContain('unknown origin');
  expect(neverRedriveReason('RetryBudgetExhausted')).toBeUndefined();
  expect(neverRedriveReason('MaxReceiveCountExceeded')).toBeUndefined();
  expect(neverRedriveReason('__proto__')).toBeUndefined();
});

const letter = (errorCode: string, dedupeKey?: string): DeadLetter => ({
  messageId: 'm',
  ageSeconds: 1,
  errorClass: errorCode === 'RetryBudgetExhausted' ? 'retryable' : 'permanent',
  errorCode,
  reason: '',
  ...(dedupeKey !== undefined ? { dedupeKey } : {}),
});

test('the summary counts by code, most first, and says which are never redriven', () => {
  const counts = summarize([letter('InvalidJson'), letter('RetryBudgetExhausted'), letter('InvalidJson')]);
  expect(counts.map((c) => [c.errorCode, c.count, c.neverRedrive !== undefined])).toEqual([
    ['InvalidJson', 2, true],
    ['RetryBudgetExhausted', 1, false],
  ]);
});

test('a selector matches on every part given; keys compare in Unicode NFC', () => {
  expect(matches(letter('RetryBudgetExhausted', 'order-1'), { code: 'RetryBudgetExhausted' })).toBe(true);
  expect(matches(letter('RetryBudgetExhausted', 'order-1'), { code: 'RetryBudgetExhausted', key: 'order-2' })).toBe(
    false,
  );
  expect(matches(letter('InvalidJson'), { key: 'order-1' })).toBe(false);
  expect(matches(letter('X', 'caf\u00e9'), { key: 'cafe\u0301' })).toBe(true);
});

test('the native move task gets the rate asked for (MaxNumberOfMessagesPerSecond), capped at 500', async () => {
  const { redrive } = await import('../../lib/dlq');
  const inputs: unknown[] = [];
  const sqs = {
    send: async (command: { input: unknown }) => {
      inputs.push(command.input);
      return { TaskHandle: 'h-1' };
    },
  } as never;
  const base = { dlqUrl: 'u', dlqArn: 'arn:dlq', sourceQueueUrl: 's', sourceQueueArn: 'arn:src' };
  await redrive(sqs, { ...base, ratePerSecond: 25 });
  await redrive(sqs, base);
  expect(inputs).toEqual([
    { SourceArn: 'arn:dlq', DestinationArn: 'arn:src', MaxNumberOfMessagesPerSecond: 25 },
    { SourceArn: 'arn:dlq', DestinationArn: 'arn:src' },
  ]);
});

test('dlq tasks reads the move tasks as an operator wants them; cancel says how many had moved', async () => {
  const { cancelMoveTask, listMoveTasks } = await import('../../lib/dlq-select');
  const inputs: unknown[] = [];
  const sqs = {
    send: async (command: { input: unknown; constructor: { name: string } }) => {
      inputs.push([command.constructor.name, command.input]);
      if (command.constructor.name === 'CancelMessageMoveTaskCommand') return { ApproximateNumberOfMessagesMoved: 42 };
      return {
        Results: [
          {
            Status: 'RUNNING',
            TaskHandle: 'h-1',
            ApproximateNumberOfMessagesMoved: 40,
            ApproximateNumberOfMessagesToMove: 100,
            MaxNumberOfMessagesPerSecond: 10,
            StartedTimestamp: Date.parse('2026-12-03T08:00:00Z'),
          },
          { Status: 'FAILED', ApproximateNumberOfMessagesMoved: 3, FailureReason: 'AccessDenied' },
        ],
      };
    },
  } as never;
  expect(await listMoveTasks(sqs, 'arn:dlq')).toEqual([
    {
      status: 'RUNNING',
      taskHandle: 'h-1',
      moved: 40,
      toMove: 100,
      ratePerSecond: 10,
      startedAt: '2026-12-03T08:00:00.000Z',
    },
    { status: 'FAILED', moved: 3, failureReason: 'AccessDenied' },
  ]);
  expect(await cancelMoveTask(sqs, 'h-1')).toBe(42);
  expect(inputs).toEqual([
    ['ListMessageMoveTasksCommand', { SourceArn: 'arn:dlq', MaxResults: 10 }],
    ['CancelMessageMoveTaskCommand', { TaskHandle: 'h-1' }],
  ]);
});
