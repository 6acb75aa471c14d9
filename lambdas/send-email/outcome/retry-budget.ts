/**
 * The outcome stage's retry budget, which is time, not receives. A record that failed for a passing reason
 * (retryable, systemic, ambiguous) goes back to the work queue as a delayed copy: the same
 * body (so the SNS envelope and the dedupe key travel with it), the publisher's attributes,
 * and two of ours: when the message first reached the queue and the attempt number. The
 * record itself is then reported done and deleted; should the delete fail, the dedupe absorbs
 * the copy left in both places. Past the budget the message goes to the DLQ at once with
 * reason `RetryBudgetExhausted` and the last error.
 *
 * A copy's receive count starts again at 1 only when the handler itself decided to retry, so
 * an invocation that keeps dying without a decision (a crash loop) still reaches the DLQ
 * through the redrive policy after maxReceiveCount receives.
 *
 * The attribute names (RETRY_ATTRIBUTE) are in the kernel's names.ts: the DLQ tools read them too.
 */
import type { SQSRecord } from 'aws-lambda';
import { PipelineError, type FailureClass } from '../../kernel/errors';
import { RETRY_ATTRIBUTE } from '../../kernel/names';
import { SQS_MAX_DELAY_SECONDS } from '../../kernel/sqs-limits';

/** SQS's largest DelaySeconds: no copy waits longer before its next attempt. */
export const MAX_DELAY_SECONDS = SQS_MAX_DELAY_SECONDS;

/** Where a record stands in its retry path. */
export interface RetryState {
  /** Epoch milliseconds when the message first reached the work queue. */
  readonly firstEnqueuedAt: number;
  /** Attempts the handler re-enqueued before this record (0 for a message fresh from SNS). */
  readonly attempt: number;
  /** Receives of this copy (SQS's ApproximateReceiveCount). */
  readonly receiveCount: number;
}

function numberAttribute(record: SQSRecord, name: string): number | undefined {
  const raw = record.messageAttributes?.[name]?.stringValue;
  const value = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Reads the retry state of a record; a record without our attributes is on its first copy. */
export function retryState(record: SQSRecord, now: number): RetryState {
  const sent = Number(record.attributes?.SentTimestamp);
  return {
    firstEnqueuedAt: numberAttribute(record, RETRY_ATTRIBUTE.firstEnqueuedAt) ?? (Number.isFinite(sent) ? sent : now),
    attempt: Math.floor(numberAttribute(record, RETRY_ATTRIBUTE.attempt) ?? 0),
    receiveCount: Math.max(1, Number(record.attributes?.ApproximateReceiveCount ?? '1') || 1),
  };
}

/**
 * The retry state of a scheduled message: its budget starts at its `sendAt` when that is later than
 * when it reached the queue, so the time it waited for its `sendAt` (schedule.ts) is no retrying and
 * never spends the budget.
 */
export function scheduledState(state: RetryState, sendAt: string | undefined): RetryState {
  const at = sendAt === undefined ? NaN : Date.parse(sendAt);
  return Number.isFinite(at) && at > state.firstEnqueuedAt ? { ...state, firstEnqueuedAt: at } : state;
}

/** Seconds since the message first reached the queue. */
export function ageSeconds(state: RetryState, now: number): number {
  return Math.max(0, (now - state.firstEnqueuedAt) / 1000);
}

/**
 * How many failures the message has had, counting every copy: the backoff doubles with it.
 * Receives of the current copy count too (an invocation that died before deciding).
 */
export function failureNumber(state: RetryState): number {
  return state.attempt + state.receiveCount;
}

export type RetryPlan =
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly nextAttempt: number }
  | { readonly kind: 'exhausted'; readonly ageSeconds: number };

/**
 * Retry after `backoff` seconds (capped at {@link MAX_DELAY_SECONDS}), or give up when the
 * retry would start after the budget ends. A message is never dead-lettered before its
 * budget has passed: the last retry is moved up to the budget's end instead.
 */
export function planRetry(state: RetryState, backoff: number, budgetSeconds: number, now: number): RetryPlan {
  const age = ageSeconds(state, now);
  const left = budgetSeconds - age;
  if (left <= 0) return { kind: 'exhausted', ageSeconds: age };
  const delaySeconds = Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.round(backoff), Math.ceil(left)));
  return { kind: 'retry', delaySeconds, nextAttempt: state.attempt + 1 };
}

/** The budget is spent: to the DLQ with this code and the last error in the reason. */
export class RetryBudgetExhaustedError extends PipelineError {
  readonly failureClass: FailureClass;
  override readonly name = 'RetryBudgetExhaustedError';
  constructor(
    readonly lastError: PipelineError,
    ageSeconds: number,
    budgetSeconds: number,
  ) {
    super(
      'RetryBudgetExhausted',
      `retried for ${Math.round(ageSeconds)} s, past the retry budget of ${budgetSeconds} s; last error ${lastError.code}: ${lastError.message}`,
      { cause: lastError },
    );
    this.failureClass = lastError.failureClass;
  }
}
