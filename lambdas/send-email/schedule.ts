/**
 * The schedule stage, before the claim: a message whose `sendAt` (contract v1.2) is still ahead is
 * not sent; it goes to the schedule queue, the waiting lane of its own, as a delayed copy (one
 * receive on the due lane per scheduled email). There the schedule function (lambdas/schedule/)
 * moves it on, one hop of at most 900 s (SQS's largest delay) after another, and forwards it to
 * the queue it came from (the copy names its lane) once due; only then does it come back here and
 * go on to its claim. The copy keeps the body (envelope, key), the publisher's attributes and the
 * time the message first reached the queue (the reference of the range rule and of the retry
 * budget, retry-budget.ts), counts its hops, and carries its `sendAt` (epoch ms) and lane, so that
 * the schedule function never reads the body; the first deferral of a key records `Scheduled` in
 * the send ledger (status `scheduled`).
 *
 * Never early: a copy goes on to its claim only when this function's clock has passed `sendAt`,
 * read from the body again; a copy that comes back early by that clock goes to the schedule queue
 * again for the seconds left. Late by at most the hop's rounding to whole seconds plus both event
 * sources' polling and batching windows.
 *
 * A `sendAt` further ahead than `maxScheduleAheadSeconds` from when the message reached the queue
 * is a permanent failure (the dedupe window covers only that much). Nothing here reads the cancel
 * mark: a cancelled key's copy waits until due and is then suppressed at its claim (claim/).
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
import { hopDelaySeconds } from '../kernel/sqs-limits';
import { maskAddress } from '../kernel/contract';
import { ledgerKey, PIPELINE_EVENT } from '../kernel/ledger/schema';
import { keyTeam } from '../kernel/ledger/binding';
import { teamOfKey } from '../kernel/teams';
import { recordPipelineEvent } from '../runtime/ledger-store';
import type { ParsedRecord } from './parse';
import { attr, originalAttributes, type QueueClient } from './outcome/queue-record';
import { retryState } from './outcome/retry-budget';
import { teamOfQueue } from '../kernel/teams';
import { laneOfSource } from './send/lanes';

/** Records a key's first deferral in the send ledger (`Scheduled`, status `scheduled`); best effort. */
export type RecordScheduled = (key: string, sendAt: string, at: string) => Promise<void>;

export interface ScheduleDeps {
  readonly settings: Pick<
    HandlerSettings,
    'scheduleQueueUrl' | 'highPriorityQueueUrl' | 'maxScheduleAheadSeconds' | 'sourceQueueUrl' | 'teams'
  >;
  readonly sqs: QueueClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
  /** @default none: the ledger is not told (no status `scheduled`) */
  readonly recordScheduled?: RecordScheduled | undefined;
}

/**
 * `due` when the record may go on to its claim (no `sendAt`, or it has passed); `deferred` when a
 * delayed copy went to the schedule queue and the record is done with. Throws InvalidMessageError
 * (permanent) for a `sendAt` too far ahead, RetryableError when the copy could not be enqueued.
 */
export type Schedule = (record: SQSRecord, parsed: ParsedRecord) => Promise<'due' | 'deferred'>;

/** How long the copy waits before the schedule function first looks at it (kernel/sqs-limits.ts). */
export { hopDelaySeconds };

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
    const team = teamOfQueue(settings.teams, settings.sourceQueueUrl);
    const hop = hopOf(record) + 1;
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: settings.scheduleQueueUrl,
          MessageBody: record.body,
          DelaySeconds: delaySeconds,
          MessageAttributes: {
            ...originalAttributes(record),
            [RETRY_ATTRIBUTE.firstEnqueuedAt]: attr(String(state.firstEnqueuedAt)),
            [RETRY_ATTRIBUTE.scheduleHop]: attr(String(hop)),
            [RETRY_ATTRIBUTE.scheduleSendAt]: attr(String(read.ms)),
            // The lane is the queue the record came from (send/lanes.ts): the copy goes back there when due.
            [RETRY_ATTRIBUTE.scheduleLane]: attr(laneOfSource(record.eventSourceARN, settings.highPriorityQueueUrl)),
            // A team's queue (the flow's sourceQueueUrl): the copy goes back to the team's queue when due.
            ...(team !== undefined ? { [RETRY_ATTRIBUTE.scheduleTeam]: attr(team) } : {}),
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

/**
 * {@link RecordScheduled} on the send ledger's table: `Scheduled` only where nothing is recorded for
 * the key yet; a team's key (one of `teamNames`) names its team there.
 */
export function ledgerRecordScheduled(
  dynamodb: Pick<DynamoDBClient, 'send'>,
  ledgerTableName: string,
  retentionSeconds: number,
  teamNames?: readonly string[],
): RecordScheduled {
  return async (key, sendAt, at) => {
    await recordPipelineEvent(
      dynamodb,
      ledgerTableName,
      ledgerKey(key),
      { type: PIPELINE_EVENT.scheduled.type, at, detail: `sendAt ${sendAt}` },
      { status: PIPELINE_EVENT.scheduled.status, over: [] },
      retentionSeconds,
      keyTeam(teamOfKey(teamNames, key), key),
    );
  };
}
