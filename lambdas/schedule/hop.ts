/**
 * The schedule function's work: scheduled mail waits in a lane of its own, off the queues of mail
 * that is due. The send function puts a message whose `sendAt` is ahead into the schedule queue as
 * a delayed copy (send-email/schedule.ts); each receive here either moves the copy on by one more
 * hop of at most 900 s (SQS's largest delay) within the schedule queue, or, once due, forwards it
 * to the queue it came from (the work queue, a team's queue, or the high-priority queue), where the
 * send function claims and sends it. So the waiting hops take none of the due lanes' concurrency
 * and never count in their backlog.
 *
 * What it reads are the copy's own attributes (RETRY_ATTRIBUTE: its `sendAt` in epoch ms, its lane
 * and its team), never the body: the body and every attribute travel on unchanged (the
 * first-enqueued time the retry budget and the range rule use among them), and only the hop count
 * moves on a hop. A team named that has no queue here sends the copy to the work queue: a message's
 * team is its envelope's topic, whichever queue it waits in. The
 * send function reads `sendAt` from the body again when the copy comes back and, should it come
 * early by its clock, puts it back into the schedule queue: this function's clock can only make it
 * look again, never send. A copy whose attributes cannot be read is forwarded to the work queue at
 * once: the send function decides (only the pipeline's functions may send to the schedule queue).
 *
 * At least once, like the rest: a copy whose send fails is reported as a batch item failure and
 * received again (after maxReceiveCount receives it goes to the pipeline's DLQ); one sent twice
 * (the delete lost) reaches the send function twice, whose claim sends it once.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { ScheduleSettings } from '../kernel/environment';
import { LANES, RETRY_ATTRIBUTE, SCHEDULE_METRIC, type Lane } from '../kernel/names';
import { hopDelaySeconds } from '../kernel/sqs-limits';

/** What to do with one copy: wait one more hop in the schedule queue, or go to its lane's queue. */
export type HopDecision =
  | { readonly kind: 'wait'; readonly queueUrl: string; readonly delaySeconds: number; readonly hop: number }
  | { readonly kind: 'due'; readonly queueUrl: string; readonly lane: Lane; readonly unreadable: boolean };

function stringAttribute(record: SQSRecord, name: string): string | undefined {
  return record.messageAttributes?.[name]?.stringValue;
}

/** The lane a copy names (`normal` when it names none or one not known). */
function laneOf(record: SQSRecord): Lane {
  const named = stringAttribute(record, RETRY_ATTRIBUTE.scheduleLane);
  return (LANES as readonly string[]).includes(named ?? '') ? (named as Lane) : 'normal';
}

/** The copy's `sendAt` in epoch ms, or undefined when it carries none that reads. */
function sendAtOf(record: SQSRecord): number | undefined {
  const raw = stringAttribute(record, RETRY_ATTRIBUTE.scheduleSendAt);
  const value = raw === undefined || !/^[0-9]+$/.test(raw) ? NaN : Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Decides one copy at `nowMs`: due once the clock has reached its `sendAt`, else another hop. */
export function decideHop(record: SQSRecord, settings: ScheduleSettings, nowMs: number): HopDecision {
  const sendAt = sendAtOf(record);
  const lane = laneOf(record);
  const team = stringAttribute(record, RETRY_ATTRIBUTE.scheduleTeam);
  const teamQueue = lane === 'normal' && team !== undefined ? settings.teams?.[team]?.queueUrl : undefined;
  const laneQueue =
    lane === 'high' && settings.highPriorityQueueUrl
      ? settings.highPriorityQueueUrl
      : (teamQueue ?? settings.workQueueUrl);
  if (sendAt === undefined) return { kind: 'due', queueUrl: settings.workQueueUrl, lane: 'normal', unreadable: true };
  if (nowMs >= sendAt) return { kind: 'due', queueUrl: laneQueue, lane, unreadable: false };
  const hop = Number(stringAttribute(record, RETRY_ATTRIBUTE.scheduleHop) ?? '0');
  return {
    kind: 'wait',
    queueUrl: settings.scheduleQueueUrl,
    delaySeconds: hopDelaySeconds(sendAt, nowMs),
    hop: (Number.isSafeInteger(hop) && hop > 0 ? hop : 0) + 1,
  };
}

/** The copy to send for `decision`: the same body and String attributes, the hop count moved on a hop. */
export function copyFor(record: SQSRecord, decision: HopDecision): SendMessageCommand {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined)
      attributes[name] = { DataType: value.dataType || 'String', StringValue: value.stringValue };
  }
  if (decision.kind === 'wait')
    attributes[RETRY_ATTRIBUTE.scheduleHop] = { DataType: 'String', StringValue: String(decision.hop) };
  return new SendMessageCommand({
    QueueUrl: decision.queueUrl,
    MessageBody: record.body,
    ...(decision.kind === 'wait' ? { DelaySeconds: decision.delaySeconds } : {}),
    MessageAttributes: attributes,
  });
}

export interface ScheduleHandlerDeps {
  readonly settings: ScheduleSettings;
  readonly sqs: { send(command: SendMessageCommand): Promise<unknown> };
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** @default Date.now */
  readonly now?: () => number;
}

/** The schedule function's handler: every record of a batch at once, a partial batch response for those whose copy was not sent. */
export function createScheduleHandler(deps: ScheduleHandlerDeps): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const { settings, sqs, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  return async (event) => {
    const failed: SQSBatchResponse['batchItemFailures'] = [];
    let hops = 0;
    await Promise.all(
      event.Records.map(async (record) => {
        const decision = decideHop(record, settings, now());
        try {
          await sqs.send(copyFor(record, decision));
        } catch (error) {
          logger.warn('could not move a scheduled copy on; it is received again', {
            sqsMessageId: record.messageId,
            hop: decision.kind,
            error: error instanceof Error ? error.message : String(error),
          });
          failed.push({ itemIdentifier: record.messageId });
          return;
        }
        if (decision.kind === 'wait') {
          hops += 1;
          logger.debug('hop', {
            sqsMessageId: record.messageId,
            hop: decision.hop,
            delaySeconds: decision.delaySeconds,
          });
        } else {
          logger.info(decision.unreadable ? 'forwarded unread: the send function decides' : 'due: forwarded', {
            sqsMessageId: record.messageId,
            lane: decision.lane,
            scheduleHop: 'forwarded',
          });
        }
      }),
    );
    // One metrics line per invocation, and none when nothing hopped (Powertools warns on an empty one).
    if (hops > 0) {
      metrics.addMetric(SCHEDULE_METRIC.scheduleHops, MetricUnit.Count, hops);
      metrics.publishStoredMetrics();
    }
    return { batchItemFailures: failed };
  };
}
