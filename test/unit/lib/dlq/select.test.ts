/**
 * Selective DLQ operations without a queue: the codes never redriven, the summary by code, what a
 * selector matches, and the native move tasks as `dlq tasks` and `stop-task` read them.
 */
import type { DeadLetter } from '../../../../lib/dlq/dead-letters';
import { cancelMoveTask, listMoveTasks, matches, neverRedriveReason, summarize } from '../../../../lib/dlq/select';

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

test('a selector matches on every part given; keys compare in Unicode NFC; any of several keys', () => {
  expect(matches(letter('RetryBudgetExhausted', 'order-1'), { code: 'RetryBudgetExhausted' })).toBe(true);
  expect(matches(letter('RetryBudgetExhausted', 'order-1'), { code: 'RetryBudgetExhausted', key: 'order-2' })).toBe(
    false,
  );
  expect(matches(letter('InvalidJson'), { key: 'order-1' })).toBe(false);
  expect(matches(letter('X', 'caf\u00e9'), { key: 'cafe\u0301' })).toBe(true);
  expect(matches(letter('X', 'order-2'), { keys: ['order-1', 'order-2'] })).toBe(true);
  expect(matches(letter('X', 'order-3'), { keys: ['order-1', 'order-2'] })).toBe(false);
  expect(matches(letter('X', 'caf\u00e9'), { code: 'X', keys: ['cafe\u0301'] })).toBe(true);
  expect(matches(letter('X'), { keys: ['order-1'] })).toBe(false);
});

test("a team's selector matches only the keys in its namespace (<team>#...), with every other part given", () => {
  expect(matches(letter('X', 'billing#order-1'), { team: 'billing' })).toBe(true);
  expect(matches(letter('X', 'order-1'), { team: 'billing' })).toBe(false);
  expect(matches(letter('X', 'sales#order-1'), { team: 'billing' })).toBe(false);
  // A team whose name starts another's takes none of the other's keys.
  expect(matches(letter('X', 'billing-eu#order-1'), { team: 'billing' })).toBe(false);
  expect(matches(letter('X', 'billing'), { team: 'billing' })).toBe(false);
  expect(matches(letter('X'), { team: 'billing' })).toBe(false);
  expect(matches(letter('InvalidJson', 'billing#order-1'), { team: 'billing', code: 'X' })).toBe(false);
  expect(matches(letter('X', 'billing#order-1'), { team: 'billing', keys: ['billing#order-1'] })).toBe(true);
});

test('dlq tasks reads the move tasks as an operator wants them; stop-task says how many had moved', async () => {
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
