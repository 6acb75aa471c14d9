/**
 * The ledger function's work: SES events (EventBridge events on the buffer queue) into the ledger
 * table, and a DeliveryReport on the delivery-status topic for every status change. Clients
 * come in as parameters so tests can run this against the emulators.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetTopicAttributesCommand, PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { bindingProblem, originProblem, type ClaimEvidence } from '../kernel/ledger/binding';
import type { LedgerSettings } from '../kernel/environment';
import {
  eventsOf,
  parseSesEvent,
  readEventBridgeEnvelope,
  UntaggedSesEventError,
  type ParsedSesEvent,
  type ReceivedSesEvent,
} from '../kernel/ledger/events';
import { LEDGER_METRIC } from '../kernel/names';
import { shownEvent, type DeliveryReport } from '../kernel/ledger/schema';
import { readClaimEvidence, readClaimsEvidence } from '../runtime/claim-evidence';
import { batchOrder } from './batch-order';
import {
  readLedgerItem,
  recordBoundEvent,
  recordEvent,
  type RecordResult,
  type StoredLedgerItem,
} from '../runtime/ledger-store';

export interface LedgerDeps {
  readonly settings: LedgerSettings;
  readonly dynamodb: Pick<DynamoDBClient, 'send'>;
  readonly sns: Pick<SNSClient, 'send'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Milliseconds since the epoch (tests pass their own clock). @default Date.now */
  readonly now?: () => number;
}

/**
 * How long the ledger trusts what it last learnt of the status topic's subscriptions: a new
 * subscriber gets every change from at most this long after it subscribed.
 */
export const SUBSCRIBERS_CHECK_MS = 60_000;

/** The report published for (and served about) a ledger item. */
export function reportOf(item: StoredLedgerItem): DeliveryReport {
  return {
    key: item.key,
    status: item.deadLettered && !item.status ? 'dead-lettered' : (item.status ?? 'unknown'),
    ...(item.sesMessageId ? { sesMessageId: item.sesMessageId } : {}),
    events: eventsOf(item).map(shownEvent),
    ...(item.updatedAt ? { updatedAt: item.updatedAt } : {}),
  };
}

export function createLedgerHandler(
  deps: LedgerDeps,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const { settings, dynamodb, sns, logger, metrics } = deps;

  let subscribers: { readonly any: boolean; readonly at: number } | undefined;
  const now = deps.now ?? Date.now;

  /**
   * Whether the status topic has a subscription (confirmed or pending), asked at most once a
   * minute: a publish nobody receives costs as much as one somebody does (BENCHMARKS 5b). When
   * SNS cannot say, the ledger publishes.
   */
  async function anyoneListening(topicArn: string): Promise<boolean> {
    if (subscribers && now() - subscribers.at < SUBSCRIBERS_CHECK_MS) return subscribers.any;
    try {
      const { Attributes = {} } = await sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }));
      const count = Number(Attributes.SubscriptionsConfirmed ?? 0) + Number(Attributes.SubscriptionsPending ?? 0);
      subscribers = { any: !(count === 0), at: now() };
    } catch (error) {
      logger.warn('could not read the status topic subscriptions; publishing', {
        error: error instanceof Error ? error.message : String(error),
      });
      subscribers = { any: true, at: now() };
    }
    return subscribers.any;
  }

  /**
   * Publishes the item's report; `team`: the team its send was tagged with (one of the pipeline's
   * teams: see ownTeam), and the key as that team's publisher wrote it (`teamKey`), when it was tagged too.
   */
  async function publish(item: StoredLedgerItem, team: string | undefined, teamKey?: string): Promise<void> {
    if (!settings.deliveryStatusTopicArn) return;
    if (!(await anyoneListening(settings.deliveryStatusTopicArn))) return;
    const report = reportOf(item);
    // A team's key names its team, in the body and as an attribute a subscription can filter on.
    await sns.send(
      new PublishCommand({
        TopicArn: settings.deliveryStatusTopicArn,
        // `sequence` (the item's version) orders one key's changes for a subscriber (and a callback).
        Message: JSON.stringify({
          ...report,
          ...(team !== undefined ? { team, ...(teamKey !== undefined ? { teamKey } : {}) } : {}),
          sequence: item.version ?? 0,
        }),
        MessageAttributes: {
          status: { DataType: 'String', StringValue: report.status },
          'idempotency-key': { DataType: 'String', StringValue: report.key },
          ...(team !== undefined ? { team: { DataType: 'String', StringValue: team } } : {}),
        },
      }),
    );
  }

  async function record(parsed: ParsedSesEvent, sqsMessageId: string, bound?: RecordResult): Promise<void> {
    const result = bound ?? (await recordEvent(dynamodb, settings.tableName, parsed, settings.retentionSeconds));
    const status = result.item.status;
    const fields = {
      dedupeKey: parsed.key,
      eventType: parsed.event.type,
      sesMessageId: parsed.event.sesMessageId,
      at: parsed.event.at,
      status,
      sqsMessageId,
      // A team's key names its team: Logs Insights counts outcomes by team (the `Outcomes by team` query).
      ...(parsed.team !== undefined ? { team: parsed.team } : {}),
    };
    if (!result.recorded) {
      metrics.addMetric(LEDGER_METRIC.duplicateEvents, MetricUnit.Count, 1);
      logger.info('ledger event already recorded', fields);
      // The first copy may have failed to publish after its write: this event set the status, say it again.
      if (status === parsed.status) await publish(result.item, parsed.team, parsed.teamKey);
      return;
    }
    metrics.addMetric(LEDGER_METRIC.eventsRecorded, MetricUnit.Count, 1);
    logger.info('ledger event recorded', { ...fields, previousStatus: result.previousStatus });
    if (status !== result.previousStatus) {
      metrics.addMetric(LEDGER_METRIC.statusChanges, MetricUnit.Count, 1);
      await publish(result.item, parsed.team, parsed.teamKey);
    }
  }

  /**
   * Why the event is not the pipeline's own, or undefined when it is: its origin, then its
   * binding to a send (one eventually consistent GetItem of the claim, and a consistent one only
   * when that cannot bind it; and one of the ledger item only while the claim has not stored SES's
   * answer for that attempt yet).
   */
  async function untrusted(
    parsed: ParsedSesEvent,
    envelope: ReceivedSesEvent['origin'],
    prefetched: ReadonlyMap<string, ClaimEvidence | undefined>,
  ): Promise<string | undefined> {
    const { trust } = settings;
    const foreign = originProblem({ ...parsed.origin, ...envelope }, trust.origin);
    if (foreign) return foreign;
    if (parsed.attemptId === undefined) return bindingProblem(parsed, undefined);
    const read = (consistent: boolean) =>
      readClaimEvidence(dynamodb, trust.claimsTableName, trust.keyPrefix, parsed.claimRef, { consistent });
    // An eventually consistent read first (half a read unit; the batch's Sends' claims were read
    // together): nearly every claim was written well before its event. Whatever it cannot bind is
    // read again, consistently, before it is refused.
    const ref = parsed.claimRef;
    let claim = ref !== undefined && prefetched.has(ref) ? prefetched.get(ref) : await read(false);
    let first = bindingProblem(parsed, claim);
    if (first) {
      claim = await read(true);
      first = bindingProblem(parsed, claim);
    }
    if (first || claim?.completed?.attemptId === parsed.attemptId) return first;
    const item = await readLedgerItem(dynamodb, settings.tableName, parsed.key);
    const send = eventsOf(item).find((e) => e.type === 'Send' && e.attemptId === parsed.attemptId);
    return bindingProblem(parsed, claim, send?.sesMessageId);
  }

  /** A record's SES event as read from its body, or why it could not be read. */
  type Read =
    { readonly parsed?: ParsedSesEvent; readonly envelope: ReceivedSesEvent['origin'] } | { readonly error: unknown };

  function read(sqsRecord: SQSRecord): Read {
    try {
      const received = readEventBridgeEnvelope(sqsRecord.body);
      return { parsed: parseSesEvent(received.message), envelope: received.origin };
    } catch (error) {
      return { error };
    }
  }

  /**
   * The event with its team tags only when they name one of the pipeline's teams: only such a team
   * is logged, published and written on the item (`team`, `teamKey`: deliveries --team lists by it).
   */
  function ownTeam(parsed: ParsedSesEvent): ParsedSesEvent {
    if (parsed.team === undefined || settings.teamNames?.includes(parsed.team)) return parsed;
    const { team, teamKey, ...rest } = parsed;
    void team;
    void teamKey;
    return rest;
  }

  async function processRecord(
    sqsRecord: SQSRecord,
    got: Read,
    prefetched: ReadonlyMap<string, ClaimEvidence | undefined>,
  ): Promise<void> {
    if ('error' in got) {
      const { error } = got;
      if (error instanceof UntaggedSesEventError) {
        // Another sender's email through the same configuration set: not ours to record.
        metrics.addMetric(LEDGER_METRIC.untaggedEvents, MetricUnit.Count, 1);
        logger.warn('SES event without a dedupe key; skipped', { sesMessageId: error.sesMessageId });
        return;
      }
      // Retried, then kept by the buffer's DLQ: nothing is lost.
      logger.error('unreadable SES event; left to the buffer queue and its DLQ', {
        sqsMessageId: sqsRecord.messageId,
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const { envelope } = got;
    if (!got.parsed) return; // an event type the ledger does not record (Open, Click)
    const parsed = ownTeam(got.parsed);
    // The usual case after a Send: the event's attempt is already bound on the item, so one
    // conditional write records it (no claim read). Its origin is checked first all the same.
    if (!originProblem({ ...parsed.origin, ...envelope }, settings.trust.origin)) {
      const bound = await recordBoundEvent(dynamodb, settings.tableName, parsed, settings.retentionSeconds);
      if (bound) {
        await record(parsed, sqsRecord.messageId, bound);
        return;
      }
    }
    const problem = await untrusted(parsed, envelope, prefetched);
    if (problem) {
      // Not evidence of any send of ours: recording it could stop a send or rewrite a status.
      metrics.addMetric(LEDGER_METRIC.untrustedEvents, MetricUnit.Count, 1);
      logger.warn('SES event not recorded: not bound to a send of the pipeline', {
        dedupeKey: parsed.key,
        eventType: parsed.event.type,
        sesMessageId: parsed.event.sesMessageId,
        reason: problem,
        sqsMessageId: sqsRecord.messageId,
      });
      return;
    }
    await record(parsed, sqsRecord.messageId);
  }

  /**
   * The claims the batch's trusted-origin `Send` events name, eventually consistent, in one
   * BatchGetItem. When it fails, nothing is prefetched and each event reads its own.
   */
  async function prefetchClaims(got: readonly Read[]): Promise<ReadonlyMap<string, ClaimEvidence | undefined>> {
    const refs = got.flatMap((one) => {
      const parsed = 'error' in one ? undefined : one.parsed;
      if (parsed?.event.type !== 'Send' || parsed.claimRef === undefined || parsed.attemptId === undefined) return [];
      if (!('envelope' in one) || originProblem({ ...parsed.origin, ...one.envelope }, settings.trust.origin))
        return [];
      return [parsed.claimRef];
    });
    if (refs.length < 2) return new Map();
    const { claimsTableName, keyPrefix } = settings.trust;
    try {
      return await readClaimsEvidence(dynamodb, claimsTableName, keyPrefix, refs);
    } catch (error) {
      logger.warn('could not read the batch claims together; reading each alone', {
        error: error instanceof Error ? error.message : String(error),
      });
      return new Map();
    }
  }

  const processor = new BatchProcessor(EventType.SQS);
  return async (event, context) => {
    logger.addContext(context);
    // One key's events in this batch go one after another, its Send first (batch-order.ts).
    const reads = new Map(event.Records.map((sqsRecord) => [sqsRecord.messageId, read(sqsRecord)]));
    const order = batchOrder(
      [...reads].map(([id, got]) => {
        const parsed = 'error' in got ? undefined : got.parsed;
        return { id, key: parsed?.key, first: parsed?.event.type === 'Send', at: parsed?.event.at ?? '' };
      }),
    );
    // The claims of the batch's Sends, in one read (every Send's binding needs its claim).
    const prefetching = prefetchClaims([...reads.values()]);
    const inOrder = async (sqsRecord: SQSRecord): Promise<void> => {
      await order.turn(sqsRecord.messageId);
      try {
        const prefetched = await prefetching;
        await processRecord(sqsRecord, reads.get(sqsRecord.messageId) ?? read(sqsRecord), prefetched);
      } finally {
        order.done(sqsRecord.messageId);
      }
    };
    try {
      // In parallel, as the order needs: a record waiting its turn holds no other key back, and
      // the one it waits for has started (in sequence, a Delivery listed before its Send would wait forever).
      return await processPartialResponse(event, inOrder, processor, { context, processInParallel: true });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
