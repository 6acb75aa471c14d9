/**
 * The outcome stage's entry: what becomes of a record that did not send. A permanent failure
 * goes to the DLQ (dead-letter.ts) and the record is done; any other is retried within the
 * retry budget (retry.ts). Every outcome is reported (report.ts): one log line, its metrics.
 */
import type { SQSRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { HandlerSettings } from '../../kernel/environment';
import type { PipelineError } from '../../kernel/errors';
import type { SendConfirmation } from '../confirm';
import type { ParsedRecord } from '../parse';
import { createDeadLetter } from './dead-letter';
import type { QueueClient } from './queue-record';
import { createReport, type Report } from './report';
import { createRetry, type RetryDeps } from './retry';

export interface OutcomeDeps {
  /** The DLQ (dead-letter.ts) and what a retry needs (retry.ts). */
  readonly settings: Pick<HandlerSettings, 'deadLetterQueueUrl'> & RetryDeps['settings'];
  readonly sqs: QueueClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The send ledger's side (confirm.ts): a dead-lettered key is marked there. @default none */
  readonly confirm?: SendConfirmation | undefined;
  readonly now: () => number;
  /** For jitter. */
  readonly random: () => number;
}

/** The outcome stage of one container. */
export interface Outcome {
  /** The log line and metrics of every outcome, sent and duplicate included. */
  readonly report: Report;
  /**
   * A permanent failure goes to the DLQ (and the record is done); any other is retried. Throws
   * the failure when the record itself must stay on the queue (its copy could not be enqueued).
   */
  settle(record: SQSRecord, failure: PipelineError, parsed: ParsedRecord | undefined): Promise<void>;
}

export function createOutcome(deps: OutcomeDeps): Outcome {
  const { settings, sqs, now } = deps;
  const report = createReport(deps.logger, deps.metrics, now);
  const deadLetter = createDeadLetter({
    deadLetterQueueUrl: settings.deadLetterQueueUrl,
    sqs,
    report,
    now,
    confirm: deps.confirm,
  });
  const scheduleRetry = createRetry({ settings, sqs, report, deadLetter, now, random: deps.random });
  return {
    report,
    async settle(record, failure, parsed) {
      if (failure.failureClass === 'permanent') {
        await deadLetter(record, failure, parsed);
        return;
      }
      if (!(await scheduleRetry(record, failure, parsed))) throw failure;
    },
  };
}
