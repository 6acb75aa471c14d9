/**
 * The callback function's work: each record of the callbacks queue is one status change (from
 * the delivery-status topic) or one replay (`email-pipeline callbacks replay`), POSTed to its
 * team's URL, signed per Standard Webhooks.
 *
 * Nothing doubled: before a try the record claims its callback's item in the callbacks table (one
 * conditional UpdateItem: not delivered yet, no try under way), which also fixes the body on the
 * first try; a 2xx marks it delivered, so a later copy of the change is dropped. Nothing lost: a
 * failed try is the same message made visible again later (ChangeMessageVisibility, backoff with
 * jitter, `Retry-After` honoured) until the retry window from its first try is spent; a callback
 * given up on goes to the callbacks DLQ with its reason. A 410 Gone disables the team's callback
 * until `email-pipeline callbacks enable`; its changes go to the DLQ meanwhile.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CALLBACK_ATTRIBUTE, CALLBACK_METRIC, PIPELINE_TARGET, type ReplayRequest } from '../kernel/callbacks/names';
import { nextTry, type TryResult } from '../kernel/callbacks/retry';
import { callbackBody, webhookHeaders, webhookId, type PublishedReport } from '../kernel/callbacks/webhook';
import { postCallback } from './post';
import type { SigningKeys } from './secrets';
import type { CallbackSettings } from './settings';
import { CallbackStore, type Claimed, type StoredCallbackRef } from './store';

export interface CallbackDeps {
  readonly settings: CallbackSettings;
  readonly dynamodb: Pick<DynamoDBClient, 'send'>;
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly signingKeys: SigningKeys;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Milliseconds since the epoch (tests pass their own clock). @default Date.now */
  readonly now?: () => number;
  /** @default Math.random */
  readonly random?: () => number;
}

/** One callback to try: which target, its id, and the body of its first try (a replay: its replay id). */
type Callback = StoredCallbackRef;

/** A record that will not be a callback: dead-lettered with this reason. */
class NotACallback extends Error {}

function readReport(text: string): PublishedReport {
  let report: Partial<PublishedReport>;
  try {
    report = JSON.parse(text) as Partial<PublishedReport>;
  } catch {
    throw new NotACallback('the body is not JSON');
  }
  if (typeof report.key !== 'string' || typeof report.status !== 'string' || !Array.isArray(report.events)) {
    throw new NotACallback('the body is not a delivery report (key, status, events)');
  }
  return report as PublishedReport;
}

export function createCallbackHandler(
  deps: CallbackDeps,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const { settings, sqs, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const store = new CallbackStore(deps.dynamodb, settings.tableName, now);

  /** The callback a record asks for (a replay reads its stored item). */
  async function callbackOf(record: SQSRecord): Promise<Callback | undefined> {
    const replayId = record.messageAttributes[CALLBACK_ATTRIBUTE.replay]?.stringValue;
    if (replayId !== undefined) {
      const { replayOf } = JSON.parse(record.body) as Partial<ReplayRequest>;
      if (typeof replayOf?.key !== 'string' || typeof replayOf.id !== 'string') {
        throw new NotACallback('a replay must name {"replayOf":{"key","id"}}');
      }
      const stored = await store.read(replayOf.key, replayOf.id);
      if (!stored) throw new NotACallback(`no stored callback ${replayOf.id} of ${replayOf.key} (expired?)`);
      return { ...stored, replayId };
    }
    const report = readReport(record.body);
    const target = report.team ?? PIPELINE_TARGET;
    const configured = settings.targets[target];
    if (!configured) return undefined;
    if (configured.statuses && !configured.statuses.includes(report.status)) return undefined;
    const body = callbackBody(report);
    return {
      target,
      key: report.key,
      id: webhookId(report),
      status: report.status,
      at: body.timestamp,
      body: JSON.stringify(body),
    };
  }

  async function deadLetter(record: SQSRecord, reason: string, firstTry: string): Promise<void> {
    const attributes = Object.fromEntries(
      Object.entries(record.messageAttributes)
        .filter(([, value]) => value.stringValue !== undefined)
        .map(([name, value]) => [name, { DataType: value.dataType, StringValue: value.stringValue }]),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: settings.deadLetterQueueUrl,
        MessageBody: record.body,
        MessageAttributes: {
          ...attributes,
          [CALLBACK_ATTRIBUTE.failure]: { DataType: 'String', StringValue: reason.slice(0, 1000) },
          [CALLBACK_ATTRIBUTE.firstTry]: { DataType: 'String', StringValue: firstTry },
        },
      }),
    );
    metrics.addMetric(CALLBACK_METRIC.failed, MetricUnit.Count, 1);
  }

  /** Makes the record visible again in `seconds`, and fails it so Lambda leaves it on the queue. */
  async function retryLater(record: SQSRecord, seconds: number, why: string): Promise<never> {
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: settings.queueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
    throw new Error(`${why}; tried again in ${seconds} s`);
  }

  async function settle(
    record: SQSRecord,
    callback: Callback,
    claimed: Extract<Claimed, { kind: 'claimed' }>,
    result: TryResult,
    firstTryMs: number,
  ): Promise<void> {
    const fields = { key: callback.key, team: callback.target, webhookId: callback.id, status: callback.status };
    const firstTry = new Date(firstTryMs).toISOString();
    if (result.kind === 'delivered') {
      await store.delivered(callback, `HTTP ${result.status}`);
      metrics.addMetric(CALLBACK_METRIC.delivered, MetricUnit.Count, 1);
      metrics.addMetric(CALLBACK_METRIC.deliveryAge, MetricUnit.Seconds, Math.max(0, (now() - firstTryMs) / 1000));
      logger.info('callback delivered', { ...fields, attempts: claimed.attempts, answer: result.status });
      return;
    }
    if (result.kind === 'gone') {
      const reason = `HTTP 410 Gone from ${settings.targets[callback.target]?.url}: the callback is disabled until \`email-pipeline callbacks enable\``;
      await store.disable(callback.target, reason);
      metrics.addMetric(CALLBACK_METRIC.disabled, MetricUnit.Count, 1);
      await store.failed(callback, 'HTTP 410 Gone');
      await deadLetter(record, reason, firstTry);
      logger.warn('callback disabled: the receiver answered 410 Gone', fields);
      return;
    }
    if (result.kind === 'refused') {
      await store.failed(callback, result.result);
      await deadLetter(record, result.result, firstTry);
      logger.warn('callback refused; dead-lettered', { ...fields, result: result.result });
      return;
    }
    const elapsed = (now() - firstTryMs) / 1000;
    const plan = { baseSeconds: settings.retryBaseSeconds, windowSeconds: settings.retryWindowSeconds };
    const next = nextTry(plan, claimed.attempts, elapsed, result.retryAfterSeconds, random);
    if ('giveUp' in next) {
      const reason = `${next.giveUp}; last: ${result.result}`;
      await store.failed(callback, result.result);
      await deadLetter(record, reason, firstTry);
      logger.warn('callback given up; dead-lettered', { ...fields, reason });
      return;
    }
    await store.release(callback, result.result);
    metrics.addMetric(CALLBACK_METRIC.retried, MetricUnit.Count, 1);
    logger.info('callback try failed; retrying', {
      ...fields,
      attempts: claimed.attempts,
      result: result.result,
      retryInSeconds: next.retryInSeconds,
    });
    await retryLater(record, next.retryInSeconds, result.result);
  }

  async function processRecord(record: SQSRecord): Promise<void> {
    const firstTryMs = Number(record.attributes.SentTimestamp) || now();
    let callback: Callback | undefined;
    try {
      callback = await callbackOf(record);
    } catch (error) {
      if (!(error instanceof NotACallback)) throw error;
      await deadLetter(record, error.message, new Date(firstTryMs).toISOString());
      logger.error('not a callback; dead-lettered', { sqsMessageId: record.messageId, reason: error.message });
      return;
    }
    if (!callback) {
      logger.info('no callback asks for this change', { sqsMessageId: record.messageId });
      return;
    }
    const fields = { key: callback.key, team: callback.target, webhookId: callback.id, status: callback.status };
    const disabled = await store.disabledReason(callback.target);
    if (disabled !== undefined) {
      await deadLetter(record, `the callback is disabled: ${disabled}`, new Date(firstTryMs).toISOString());
      logger.warn('callback disabled; dead-lettered', fields);
      return;
    }
    const claimed = await store.claim(callback, settings.timeoutMs + 5_000);
    if (claimed.kind === 'delivered') {
      logger.info('callback already delivered; not sent again', fields);
      return;
    }
    if (claimed.kind === 'busy') {
      await retryLater(record, Math.max(1, Math.ceil(claimed.leaseLeftMs / 1000)), 'another try is under way');
    }
    if (claimed.kind !== 'claimed') return;
    const target = settings.targets[callback.target];
    const keys = await deps.signingKeys(callback.target);
    const headers = webhookHeaders(keys, callback.id, claimed.body, now());
    const result = await postCallback(target?.url ?? '', headers, claimed.body, {
      timeoutMs: settings.timeoutMs,
      allowPrivateAddresses: settings.allowPrivateAddresses,
      now,
    });
    await settle(record, callback, claimed, result, firstTryMs);
  }

  const processor = new BatchProcessor(EventType.SQS);
  return async (event, context) => {
    logger.addContext(context);
    try {
      return await processPartialResponse(event, processRecord, processor, {
        context,
        processInParallel: true,
        throwOnFullBatchFailure: false,
      });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
