/**
 * The outcome stage, for a record that may yet send: within the retry budget a delayed copy
 * goes back to the work queue (retry-budget.ts) after the backoff (backoff.ts); past
 * the budget the record is dead-lettered.
 */
import type { SQSRecord } from 'aws-lambda';
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { retryDelaySeconds } from './backoff';
import { requestedRetrySeconds } from '../confirm';
import type { DeadLetter } from './dead-letter';
import type { ParsedRecord } from '../parse';
import type { PipelineError } from '../../kernel/errors';
import { attr, originalAttributes, receiveCount, type QueueClient } from './queue-record';
import type { Report } from './report';
import {
  ageSeconds,
  failureNumber,
  planRetry,
  retryState,
  scheduledState,
  RetryBudgetExhaustedError,
} from './retry-budget';
import type { HandlerSettings } from '../../kernel/environment';
import { RETRY_ATTRIBUTE } from '../../kernel/names';

export interface RetryDeps {
  /** The lane's queue a retry goes back to, the backoff (backoff.ts), the retry budget and the receives before the DLQ. */
  readonly settings: Pick<
    HandlerSettings,
    | 'sourceQueueUrl'
    | 'maxReceiveCount'
    | 'retryBudgetSeconds'
    | 'retryBaseSeconds'
    | 'retryCapSeconds'
    | 'systemicRetrySeconds'
  >;
  readonly sqs: QueueClient;
  readonly report: Report;
  readonly deadLetter: DeadLetter;
  readonly now: () => number;
  /** For jitter. */
  readonly random: () => number;
}

/**
 * Retries a record within the retry budget: a delayed copy goes back to the work queue and
 * the record is done with (true); past the budget it is dead-lettered (true). Only when the
 * copy cannot be enqueued does the record itself stay, hidden for the backoff (false).
 */
export type ScheduleRetry = (
  record: SQSRecord,
  failure: PipelineError,
  parsed: ParsedRecord | undefined,
) => Promise<boolean>;

export function createRetry(deps: RetryDeps): ScheduleRetry {
  const { settings, sqs, report, now } = deps;
  return async (record, failure, parsed) => {
    const failureClass = failure.failureClass === 'permanent' ? 'retryable' : failure.failureClass;
    // A scheduled message's budget (and age) runs from its sendAt: waiting for it is no retrying.
    const state = scheduledState(retryState(record, now()), parsed?.email.sendAt);
    const backoff = retryDelaySeconds(
      {
        failureClass,
        code: failure.code,
        failures: failureNumber(state),
        // A send waiting for its SES event asks for its own time (confirm.ts); any other gets the backoff.
        requestedSeconds: requestedRetrySeconds(failure),
      },
      settings,
      deps.random,
    );
    const plan = planRetry(state, backoff, settings.retryBudgetSeconds, now());
    if (plan.kind === 'exhausted') {
      report.retryBudgetExhausted();
      await deps.deadLetter(
        record,
        new RetryBudgetExhaustedError(failure, plan.ageSeconds, settings.retryBudgetSeconds),
        parsed,
      );
      return true;
    }
    const age = ageSeconds(state, now());
    report.retrying(failureClass, failure.code, age);

    let requeued = false;
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: settings.sourceQueueUrl,
          MessageBody: record.body,
          DelaySeconds: plan.delaySeconds,
          MessageAttributes: {
            ...originalAttributes(record),
            [RETRY_ATTRIBUTE.firstEnqueuedAt]: attr(String(state.firstEnqueuedAt)),
            [RETRY_ATTRIBUTE.attempt]: attr(String(plan.nextAttempt)),
          },
        }),
      );
      requeued = true;
    } catch (error) {
      // The record stays: hidden for the backoff, it comes back with its receive count one up.
      report.retryWarning(record, parsed, 'could not re-enqueue the retry; backing off in place', error);
      try {
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: settings.sourceQueueUrl,
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: Math.max(1, plan.delaySeconds),
          }),
        );
      } catch (visibilityError) {
        report.retryWarning(
          record,
          parsed,
          'could not set the retry backoff; the queue visibility timeout applies',
          visibilityError,
        );
      }
    }
    report.retried(record, parsed, failure, {
      failureClass,
      delaySeconds: plan.delaySeconds,
      attempt: plan.nextAttempt,
      ageSeconds: age,
      requeued,
      lastReceive: !requeued && receiveCount(record) >= settings.maxReceiveCount,
    });
    return requeued;
  };
}
