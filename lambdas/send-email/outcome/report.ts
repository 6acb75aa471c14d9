/**
 * The outcome stage's report: what the handler tells operators about each record, one log
 * line per outcome, its `decision` field one of sent, duplicate, dead-lettered or retry
 * (DECISIONS in the kernel's names.ts), and the metrics counted with it (METRIC there).
 */
import type { SQSRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { causeText } from '../classify';
import type { ParsedRecord } from '../parse';
import type { FailureClass, PipelineError } from '../../kernel/errors';
import { maskAddress } from '../../kernel/contract';
import type { CancelMark } from '../../kernel/ledger/cancel-mark';
import { METRIC, SCHEDULE_METRIC } from '../../kernel/names';
import { receiveCount } from './queue-record';
import { ageSeconds, retryState } from './retry-budget';

/** Failures where nothing was started. */
const NOT_STARTED = new Set(['CircuitOpen', 'PacingDeadline']);

/** A retry's class: a permanent failure is only retried as retryable (never, in practice). */
export type RetryClass = Exclude<FailureClass, 'permanent'>;

/** What a `retry` line says beyond the record and the failure. */
export interface RetryOutcome {
  readonly failureClass: RetryClass;
  readonly delaySeconds: number;
  readonly attempt: number;
  readonly ageSeconds: number;
  /** True when a delayed copy went back to the work queue; false when the record itself stays. */
  readonly requeued: boolean;
  /** The record stays and has had its last receive: the redrive policy moves it to the DLQ. */
  readonly lastReceive: boolean;
}

/** SES's answer as the `sent` line tells it: its message id, and the attempt id the send was tagged with. */
export type SentAnswer = string | { readonly sesMessageId: string; readonly attemptId?: string | undefined };

export interface Report {
  /**
   * One `sent` line and one EmailsSent count, whichever path the send took. The line carries the
   * send's attempt id (when the answer has one) and `ageSeconds`, the time since the message first
   * reached the queue (across retries: the retry budget's clock).
   */
  sent(record: SQSRecord, parsed: ParsedRecord, answer: SentAnswer, extra?: Readonly<Record<string, unknown>>): void;
  /** Sent without the idempotency check (fail-open): counted as FailOpenSends too. */
  sentWithoutCheck(record: SQSRecord, parsed: ParsedRecord, sesMessageId: string, storeError: PipelineError): void;
  /** Sent, but the completion write failed; `attempts` is the retry that wrote it, undefined if none did. */
  sentAfterFailedWrite(
    record: SQSRecord,
    parsed: ParsedRecord,
    sesMessageId: string,
    attempts: number | undefined,
    error: unknown,
  ): void;
  /** A copy of an email already sent: nothing sent again. */
  duplicate(
    record: SQSRecord,
    parsed: ParsedRecord,
    first: { readonly sesMessageId: string; readonly sentAt: string },
  ): void;
  /** A copy of a key cancelled before it was sent: suppressed at its claim, never sent. */
  cancelled(record: SQSRecord, parsed: ParsedRecord, mark: CancelMark): void;
  /** The record went to the DLQ; `known` is what is known of its key and MessageId. */
  deadLettered(
    record: SQSRecord,
    parsed: ParsedRecord | undefined,
    failure: PipelineError,
    known: { readonly dedupeKey?: string | undefined; readonly snsMessageId?: string | undefined },
  ): void;
  /** The retry budget is spent (the record is dead-lettered next). */
  retryBudgetExhausted(): void;
  /** Counts a retry by its class and age, before its copy is sent. */
  retrying(failureClass: RetryClass, code: string, ageSeconds: number): void;
  /** A step of a retry that failed; the record is retried anyway. */
  retryWarning(record: SQSRecord, parsed: ParsedRecord | undefined, message: string, error: unknown): void;
  /** The `retry` line. */
  retried(record: SQSRecord, parsed: ParsedRecord | undefined, failure: PipelineError, outcome: RetryOutcome): void;
}

export function createReport(logger: Logger, metrics: Metrics, now: () => number = Date.now): Report {
  function recordKeys(record: SQSRecord, parsed: ParsedRecord | undefined) {
    return {
      sqsMessageId: record.messageId,
      receiveCount: receiveCount(record),
      ...(parsed
        ? {
            dedupeKey: parsed.key,
            keySource: parsed.keySource,
            ...(parsed.snsMessageId ? { snsMessageId: parsed.snsMessageId } : {}),
            to: parsed.email.to.map(maskAddress),
          }
        : {}),
    };
  }

  const report: Report = {
    sent(record, parsed, answer, extra = {}) {
      metrics.addMetric(METRIC.emailsSent, MetricUnit.Count, 1);
      const { sesMessageId, attemptId } =
        typeof answer === 'string' ? { sesMessageId: answer, attemptId: undefined } : answer;
      const line = {
        decision: 'sent',
        ...recordKeys(record, parsed),
        sesMessageId,
        ...(attemptId !== undefined ? { attemptId } : {}),
        ageSeconds: Math.round(ageSeconds(retryState(record, now()), now()) * 10) / 10,
        ...extra,
      };
      // A send off the normal path (fail-open, a late completion) is worth an operator's look.
      if (Object.keys(extra).length > 0) logger.warn('sent', line);
      else logger.info('sent', line);
    },

    sentWithoutCheck(record, parsed, sesMessageId, storeError) {
      metrics.addMetric(METRIC.failOpenSends, MetricUnit.Count, 1);
      report.sent(record, parsed, sesMessageId, {
        failOpen: true,
        reason: `idempotency store unavailable, sent without the check: ${storeError.message}`,
      });
    },

    sentAfterFailedWrite(record, parsed, sesMessageId, attempts, error) {
      if (attempts !== undefined) {
        report.sent(record, parsed, sesMessageId, {
          completionWritten: true,
          note: `the completion write succeeded on retry ${attempts}`,
        });
        return;
      }
      metrics.addMetric(METRIC.completionWriteFailures, MetricUnit.Count, 1);
      report.sent(record, parsed, sesMessageId, {
        completionWritten: false,
        note: 'the completion was never written: its claim expires with this invocation, and a copy arriving after that can send again',
        error: causeText(error),
      });
    },

    duplicate(record, parsed, first) {
      metrics.addMetric(METRIC.duplicatesSuppressed, MetricUnit.Count, 1);
      logger.info('duplicate suppressed', {
        decision: 'duplicate',
        ...recordKeys(record, parsed),
        sesMessageId: first.sesMessageId,
        firstSentAt: first.sentAt,
      });
    },

    cancelled(record, parsed, mark) {
      metrics.addMetric(SCHEDULE_METRIC.cancelledSuppressed, MetricUnit.Count, 1);
      logger.info('cancelled: not sent', {
        decision: 'cancelled',
        ...recordKeys(record, parsed),
        cancelledAt: mark.cancelledAt,
        cancelledBy: mark.cancelledBy,
      });
    },

    deadLettered(record, parsed, failure, { dedupeKey, snsMessageId }) {
      metrics.addMetric(METRIC.permanentFailures, MetricUnit.Count, 1);
      metrics
        .singleMetric()
        .addDimension('reason', failure.code)
        .addMetric(METRIC.permanentFailuresByReason, MetricUnit.Count, 1);
      logger.warn('dead-lettered', {
        decision: 'dead-lettered',
        ...recordKeys(record, parsed),
        ...(dedupeKey ? { dedupeKey } : {}),
        ...(snsMessageId ? { snsMessageId } : {}),
        errorCode: failure.code,
        reason: failure.message,
      });
    },

    retryBudgetExhausted() {
      metrics.addMetric(METRIC.retryBudgetExhausted, MetricUnit.Count, 1);
    },

    retrying(failureClass, code, ageSeconds) {
      if (failureClass === 'ambiguous') metrics.addMetric(METRIC.ambiguousSends, MetricUnit.Count, 1);
      else if (failureClass === 'systemic') metrics.addMetric(METRIC.systemicFailures, MetricUnit.Count, 1);
      else metrics.addMetric(METRIC.retryableFailures, MetricUnit.Count, 1);
      if (code === 'InProgress') metrics.addMetric(METRIC.inProgressConflicts, MetricUnit.Count, 1);
      metrics.addMetric(METRIC.retryAge, MetricUnit.Seconds, Math.round(ageSeconds));
    },

    retryWarning(record, parsed, message, error) {
      logger.warn(message, {
        ...recordKeys(record, parsed),
        error: error instanceof Error ? error.message : String(error),
      });
    },

    retried(record, parsed, failure, outcome) {
      const { failureClass } = outcome;
      const line = {
        decision: 'retry' as const,
        ...recordKeys(record, parsed),
        errorClass: failureClass,
        errorCode: failure.code,
        reason: failure.message,
        retryInSeconds: outcome.delaySeconds,
        attempt: outcome.attempt,
        ageSeconds: Math.round(outcome.ageSeconds),
        requeued: outcome.requeued,
        ...(outcome.lastReceive ? { note: 'last receive: the redrive policy moves it to the DLQ' } : {}),
        ...(failureClass === 'ambiguous'
          ? { note: 'SES may have accepted this email; the retry can deliver it twice (counted as AmbiguousSends)' }
          : {}),
      };
      if (failureClass === 'systemic') logger.error('sending blocked for the account; backing off', line);
      else if (failureClass === 'retryable' && (failure.code === 'InProgress' || NOT_STARTED.has(failure.code)))
        logger.info('retry', line);
      else logger.warn('retry', line);
    },
  };
  return report;
}
