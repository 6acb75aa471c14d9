/**
 * The schedule stage, before the claim: a message whose `sendAt` (contract v1.2) is still ahead is
 * not sent; it goes back to the work queue as a delayed copy, one hop of at most 900 s (SQS's
 * largest delay) after another, until it is due, and only then goes on to its claim. The copy keeps
 * the body (envelope, key), the publisher's attributes and the time the message first reached the
 * queue (the reference of the range rule and of the retry budget, retry-budget.ts), and counts its
 * hops; the first deferral of a key records `Scheduled` in the send ledger (status `scheduled`).
 *
 * Never early: a copy is sent on only when the function's clock has passed `sendAt`; a copy SQS
 * hands over early by that clock is deferred again by the seconds left. Late by at most the hop's
 * rounding to whole seconds plus the event source's polling and batching window.
 *
 * A `sendAt` further ahead than `maxScheduleAheadSeconds` from when the message reached the queue
 * is a permanent failure (the dedupe window covers only that much). Nothing here reads the cancel
 * mark: a cancelled key's copies hop until due and are then suppressed at their claim (claim/).
 */
import type { SQSRecord } from 'aws-lambda';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { InvalidMessageError, readSendAt, sendAtRangeProblem } from '../kernel/contract';
import type { HandlerSettings } from '../kernel/environment';
import { RetryableError } from '../kernel/errors';
import { RETRY_ATTRIBUTE, SCHEDULE_METRIC } from '../kernel/names';
import { SQS_MAX_DELAY_SECONDS } from '../kernel/sqs-limits';
import { maskAddress } from '../kernel/contract';
import { ledgerKey, PIPELINE_EVENT } from '../kernel/ledger/schema';
import { recordPipelineEvent } from '../runtime/ledger-store';
import type { ParsedRecord } from './parse';
import { attr, originalAttributes, type QueueClient } from './outcome/queue-record';
import { retryState } from './outcome/retry-budget';

/** Records a key's first deferral in the send ledger (`Scheduled`, status `scheduled`); best effort. */
export type RecordScheduled = (key: string, sendAt: string, at: string) => Promise<void>;

export interface ScheduleDeps {
  readonly settings: Pick<HandlerSettings, 'sourceQueueUrl' | 'maxScheduleAheadSeconds'>;
  readonly sqs: QueueClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
  /** @default none: the ledger is not told (no status `scheduled`) */
  readonly recordScheduled?: RecordScheduled | undefined;
}

/**
 * `due` when the record may go on to its claim (no `sendAt`, or it has passed); `deferred` when a
 * delayed copy went back to the queue and the record is done with. Throws InvalidMessageError
 * (permanent) for a `sendAt` too far ahead, RetryableError when the copy could not be enqueued.
 */
export type Schedule = (record: SQSRecord, parsed: ParsedRecord) => Promise<'due' | 'deferred'>;

/** How long the next hop waits: the seconds left to `sendAt`, rounded up, at most SQS's largest delay. */
export function hopDelaySeconds(sendAtMs: number, nowMs: number): number {
  return Math.max(1, Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil((sendAtMs - nowMs) / 1000)));
}

function hopOf(record: SQSRecord): number {
  const value = Number(record.messageAttributes?.[RETRY_ATTRIBUTE.scheduleHop]?.stringValue ?? '0');
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

export function createSchedule(deps: ScheduleDeps): Schedule {
  const { settings, sqs, logger, metrics, now } = deps;
  return async (record, parsed) => {
    const { sendAt } = parsed.email;
    if (sendAt === undefined) return 'due';
    const read = readSendAt(sendAt);
    // validateEmail took it, so it reads; should it not, there is no time to wait for.
    if (!read.ok) return 'due';
    const state = retryState(record, now());
    const problem = sendAtRangeProblem(read.ms, state.firstEnqueuedAt, settings.maxScheduleAheadSeconds);
    if (problem !== undefined) {
      const error = new InvalidMessageError('SendAtOutOfRange', [{ field: 'sendAt', reason: problem }]);
      error.dedupeKey = parsed.key;
      error.snsMessageId = parsed.snsMessageId;
      throw error;
    }
    const nowMs = now();
    if (nowMs >= read.ms) return 'due';

    const delaySeconds = hopDelaySeconds(read.ms, nowMs);
    const hop = hopOf(record) + 1;
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: settings.sourceQueueUrl,
          MessageBody: record.body,
          DelaySeconds: delaySeconds,
          MessageAttributes: {
            ...originalAttributes(record),
            [RETRY_ATTRIBUTE.firstEnqueuedAt]: attr(String(state.firstEnqueuedAt)),
            [RETRY_ATTRIBUTE.scheduleHop]: attr(String(hop)),
          },
        }),
      );
    } catch (error) {
      throw new RetryableError(
        'ScheduleHopFailed',
        `could not defer the message until its sendAt ${sendAt}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    metrics.addMetric(SCHEDULE_METRIC.scheduleHops, MetricUnit.Count, 1);
    if (hop === 1) {
      metrics.addMetric(SCHEDULE_METRIC.emailsScheduled, MetricUnit.Count, 1);
      await deps.recordScheduled?.(parsed.key, sendAt, new Date(nowMs).toISOString()).catch((error: unknown) =>
        logger.warn('could not record the key as scheduled in the send ledger', {
          dedupeKey: parsed.key,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }
    logger.info('scheduled', {
      decision: 'scheduled',
      sqsMessageId: record.messageId,
      dedupeKey: parsed.key,
      keySource: parsed.keySource,
      snsMessageId: parsed.snsMessageId,
      to: parsed.email.to.map(maskAddress),
      sendAt,
      hop,
      nextLookInSeconds: delaySeconds,
    });
    return 'deferred';
  };
}

/** {@link RecordScheduled} on the send ledger's table: `Scheduled` only where nothing is recorded for the key yet. */
export function ledgerRecordScheduled(
  dynamodb: Pick<DynamoDBClient, 'send'>,
  ledgerTableName: string,
  retentionSeconds: number,
): RecordScheduled {
  return async (key, sendAt, at) => {
    await recordPipelineEvent(
      dynamodb,
      ledgerTableName,
      ledgerKey(key),
      { type: PIPELINE_EVENT.scheduled.type, at, detail: `sendAt ${sendAt}` },
      { status: PIPELINE_EVENT.scheduled.status, over: [] },
      retentionSeconds,
    );
  };
}
