import type { SQSRecord } from 'aws-lambda';
import { RetryableError } from '../../../../../lambdas/kernel/errors';
import {
  ageSeconds,
  failureNumber,
  MAX_DELAY_SECONDS,
  planRetry,
  retryState,
  RetryBudgetExhaustedError,
} from '../../../../../lambdas/send-email/outcome/retry-budget';
import { RETRY_ATTRIBUTE } from '../../../../../lambdas/kernel/names';
import { sqsRecord } from '../../../helpers';

const NOW = 1_800_000_000_000;

function record(options: { sentAt?: number; receiveCount?: number; first?: string; attempt?: string } = {}): SQSRecord {
  return sqsRecord({
    sentAt: options.sentAt ?? NOW - 10_000,
    attributes: { ApproximateReceiveCount: String(options.receiveCount ?? 1) },
    messageAttributes: {
      ...(options.first !== undefined ? { [RETRY_ATTRIBUTE.firstEnqueuedAt]: options.first } : {}),
      ...(options.attempt !== undefined ? { [RETRY_ATTRIBUTE.attempt]: options.attempt } : {}),
    },
  });
}

describe('retryState', () => {
  test('a message fresh from SNS starts its budget when it reached the queue', () => {
    const state = retryState(record({ sentAt: NOW - 10_000 }), NOW);
    expect(state).toEqual({ firstEnqueuedAt: NOW - 10_000, attempt: 0, receiveCount: 1 });
    expect(ageSeconds(state, NOW)).toBe(10);
  });

  test('a re-enqueued copy keeps the first enqueue time and its attempt number, not its own send time', () => {
    const state = retryState(record({ sentAt: NOW - 1000, first: String(NOW - 3_600_000), attempt: '7' }), NOW);
    expect(state.firstEnqueuedAt).toBe(NOW - 3_600_000);
    expect(state.attempt).toBe(7);
    expect(ageSeconds(state, NOW)).toBe(3600);
  });

  test('attributes that are not numbers are ignored', () => {
    const state = retryState(record({ sentAt: NOW - 5000, first: 'yesterday', attempt: '-2' }), NOW);
    expect(state).toMatchObject({ firstEnqueuedAt: NOW - 5000, attempt: 0 });
  });

  test('failures count every copy and the receives of this one', () => {
    expect(failureNumber(retryState(record({ attempt: '3', receiveCount: 2 }), NOW))).toBe(5);
  });
});

describe('planRetry', () => {
  const state = (ageS: number) => retryState(record({ sentAt: NOW - ageS * 1000 }), NOW);

  test('within the budget: a delayed copy with the next attempt number', () => {
    expect(planRetry(state(60), 32, 86_400, NOW)).toEqual({ kind: 'retry', delaySeconds: 32, nextAttempt: 1 });
  });

  test('the delay never exceeds the SQS maximum', () => {
    expect(planRetry(state(60), 3600, 86_400, NOW)).toMatchObject({ delaySeconds: MAX_DELAY_SECONDS });
  });

  test('the last retry is moved up to the end of the budget rather than given up early', () => {
    expect(planRetry(state(95), 32, 100, NOW)).toMatchObject({ kind: 'retry', delaySeconds: 5 });
  });

  test('past the budget: exhausted, with the age', () => {
    expect(planRetry(state(100), 32, 100, NOW)).toEqual({ kind: 'exhausted', ageSeconds: 100 });
  });

  test('a multi-hour outage stays within the default budget', () => {
    expect(planRetry(state(6 * 3600), 300, 86_400, NOW).kind).toBe('retry');
  });
});

test('an exhausted budget carries the last error, its class and the budget in the reason', () => {
  const last = new RetryableError('StoreUnavailable', 'the idempotency store is unavailable (TimeoutError)');
  const error = new RetryBudgetExhaustedError(last, 3601.4, 3600);
  expect(error.code).toBe('RetryBudgetExhausted');
  expect(error.failureClass).toBe('retryable');
  expect(error.message).toBe(
    'retried for 3601 s, past the retry budget of 3600 s; last error StoreUnavailable: the idempotency store is unavailable (TimeoutError)',
  );
});
