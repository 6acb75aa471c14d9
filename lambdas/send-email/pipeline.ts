/**
 * What happens to one queue record: parse, claim the key, send, and turn every
 * failure into one decision (sent, duplicate, dead-lettered, retry). The clients
 * come in as parameters so tests can run this against real emulators.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { ChangeMessageVisibilityCommand, SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { requestedRetrySeconds, type SendConfirmation } from './confirm';
import { causeText, classifyIdempotencyError, classifySesError, unexpectedError } from './classify';
import { buildSendEmailInput } from './email';
import { PipelineError, RetryableError } from './errors';
import { CircuitBreaker } from './breaker';
import { containerShare, SendPacer } from './pacing';
import { COMPLETION_RETRY_MARGIN_MS, retryDelaySeconds, SEND_DEADLINE_MARGIN_MS } from './backoff';
import {
  ageSeconds,
  failureNumber,
  planRetry,
  RETRY_ATTRIBUTE,
  retryState,
  RetryBudgetExhaustedError,
} from './retry-budget';
import { parseRecord, type ParsedRecord } from './envelope';
import { InvalidMessageError, maskAddress, type EmailMessage } from './message';
import type { HandlerSettings } from './settings';
import { METRIC } from './metric-names';
import { DLQ_ATTRIBUTE } from './dlq-attributes';

export { DLQ_ATTRIBUTE, METRIC };

/** What SES said for an email, stored with the idempotency record and returned to duplicates. */
export interface SendResult {
  readonly sesMessageId: string;
  readonly sentAt: string;
}

interface SendRequest {
  readonly key: string;
  readonly email: EmailMessage;
}

interface SendClient {
  send(command: SendEmailCommand): Promise<{ MessageId?: string | undefined }>;
}
interface QueueClient {
  send(command: SendMessageCommand | ChangeMessageVisibilityCommand): Promise<unknown>;
}

export interface PipelineDeps {
  readonly settings: HandlerSettings;
  readonly ses: SendClient;
  readonly sqs: QueueClient;
  readonly persistenceStore: BasePersistenceLayer;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Confirm before resend (confirm.ts): consults the send ledger when an earlier attempt's fate is unknown. @default off */
  readonly confirm?: SendConfirmation;
  /** For jitter; injectable so tests are repeatable. */
  readonly random?: () => number;
  readonly now?: () => number;
  /** Waits between completion-write attempts; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Failures where nothing was started. */
const NOT_STARTED = new Set(['CircuitOpen', 'PacingDeadline']);

function attr(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
}

/** Copies the record's own message attributes (e.g. a raw message's key) so a redrive keeps them. */
function originalAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const ours = new Set<string>(Object.values(RETRY_ATTRIBUTE));
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined && !ours.has(name))
      out[name] = { DataType: value.dataType || 'String', StringValue: value.stringValue };
  }
  return out;
}

export interface Pipeline {
  /** Call once per invocation, before the records. */
  registerContext(context: Context): void;
  /** Processes one record; resolves when it is done with (sent, duplicate or dead-lettered), throws to retry it. */
  processRecord(record: SQSRecord): Promise<void>;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { settings, ses, sqs, persistenceStore, logger, metrics } = deps;
  const random = deps.random ?? Math.random;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let context: Context | undefined;
  // What SES answered, by key, until the completion write has been attempted.
  const accepted = new Map<string, SendResult>();
  // Per container, as a Lambda container keeps them between invocations.
  const pacer = new SendPacer({
    ratePerSecond: containerShare(settings.maxSendRate, settings.maxConcurrency),
    now,
    sleep,
  });
  const breaker = new CircuitBreaker({
    coolDownMs: settings.retryBaseSeconds * 1000,
    maxCoolDownMs: Math.max(settings.retryBaseSeconds, settings.retryCapSeconds) * 1000,
    now,
  });
  // Keys whose earlier attempt the send ledger confirmed: completed without a send.
  const confirmedBySesEvent = new Set<string>();

  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'email',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: settings.dedupeWindowSeconds,
    // A replayed result is marked so the caller can tell a duplicate from a send.
    responseHook: (response) => ({ ...(response as unknown as SendResult), duplicate: true }),
  });

  /** Holds a send back while the breaker is open; waits for its share of the send rate. */
  async function admit(request: SendRequest): Promise<{ probe: boolean }> {
    const permit = breaker.permit();
    if (!permit.start) {
      metrics.addMetric(METRIC.sendsHeldByBreaker, MetricUnit.Count, 1);
      throw new RetryableError(
        'CircuitOpen',
        `not sent: SES failed recently, new sends are held for ${Math.ceil(permit.retryInMs / 1000)} s more`,
      );
    }
    const recipients = request.email.to.length + request.email.cc.length + request.email.bcc.length;
    const deadline =
      now() + (context?.getRemainingTimeInMillis() ?? 0) - settings.sesTimeoutMs - SEND_DEADLINE_MARGIN_MS;
    const paced = await pacer.acquire(recipients, deadline);
    if (!paced || (!permit.probe && breaker.current() === 'open')) {
      breaker.onAbandoned(permit.probe);
      metrics.addMetric(paced ? METRIC.sendsHeldByBreaker : METRIC.sendsPastDeadline, MetricUnit.Count, 1);
      throw paced
        ? new RetryableError('CircuitOpen', 'not sent: SES failed while this send waited for its turn')
        : new RetryableError(
            'PacingDeadline',
            `not sent: no room under maxSendRate (${settings.maxSendRate}/s) before the invocation's deadline`,
          );
    }
    return { probe: permit.probe };
  }

  async function sendEmail(request: SendRequest): Promise<SendResult> {
    const confirmed = await deps.confirm?.beforeSend(request.key);
    if (confirmed) {
      confirmedBySesEvent.add(request.key);
      accepted.set(request.key, confirmed);
      return confirmed;
    }
    const { probe } = await admit(request);
    const started = now();
    let response: { MessageId?: string | undefined };
    try {
      response = await ses.send(new SendEmailCommand(buildSendEmailInput(request.email, settings, request.key)));
      breaker.onSuccess(probe);
    } catch (error) {
      const failure = classifySesError(error);
      deps.confirm?.afterFailedSend(request.key, failure);
      if (failure.code === 'Throttled') {
        metrics.addMetric(METRIC.sesThrottles, MetricUnit.Count, 1);
        pacer.onThrottle();
      }
      if (failure.failureClass === 'ambiguous' || failure.code === 'Throttled' || failure.code === 'SesUnreachable') {
        breaker.onFailure(probe);
      } else {
        breaker.onSuccess(probe);
      }
      throw failure;
    } finally {
      metrics.addMetric(METRIC.sesSendLatency, MetricUnit.Milliseconds, now() - started);
    }
    const result = { sesMessageId: response.MessageId ?? 'unknown', sentAt: new Date(now()).toISOString() };
    accepted.set(request.key, result);
    return result;
  }

  /**
   * SES accepted the email but the completion write failed (the store is down or
   * throttled). The claim is still "in progress", so copies that arrive now are
   * held back; keep writing the completion until shortly before the invocation
   * ends, when the claim expires and a copy could send again.
   */
  async function writeCompletion(request: SendRequest, result: SendResult): Promise<number | undefined> {
    const deadline = now() + (context?.getRemainingTimeInMillis() ?? 0) - COMPLETION_RETRY_MARGIN_MS;
    let pause = 100;
    for (let attempt = 1; now() + pause < deadline; attempt += 1) {
      await sleep(pause);
      try {
        // A hung store must not hold the invocation past its deadline: stop waiting for it there.
        await Promise.race([
          persistenceStore.saveSuccess(
            { key: request.key, email: request.email } as unknown as JSONValue,
            result as unknown as JSONValue,
          ),
          sleep(Math.max(0, deadline - now())).then(() => {
            throw new Error('the completion write did not answer before the deadline');
          }),
        ]);
        return attempt;
      } catch {
        pause = Math.min(pause * 2, 2000);
      }
    }
    return undefined;
  }

  const sendOnce = makeIdempotent(sendEmail, {
    persistenceStore,
    config,
    keyPrefix: settings.keyPrefix,
  }) as (request: SendRequest) => Promise<SendResult & { duplicate?: true }>;

  function recordKeys(record: SQSRecord, parsed: ParsedRecord | undefined) {
    return {
      sqsMessageId: record.messageId,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? '1'),
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

  async function deadLetter(record: SQSRecord, failure: PipelineError, parsed: ParsedRecord | undefined) {
    const keys = recordKeys(record, parsed);
    // What is known of a record that failed to parse comes with its error.
    const known = failure instanceof InvalidMessageError ? failure : undefined;
    const dedupeKey = parsed?.key ?? known?.dedupeKey;
    const snsMessageId = parsed?.snsMessageId ?? known?.snsMessageId;
    const attributes: Record<string, MessageAttributeValue> = {
      ...originalAttributes(record),
      [DLQ_ATTRIBUTE.errorClass]: attr(failure.failureClass),
      [DLQ_ATTRIBUTE.errorCode]: attr(failure.code),
      [DLQ_ATTRIBUTE.reason]: attr(failure.message.slice(0, 1024) || failure.code),
      [DLQ_ATTRIBUTE.failedAt]: attr(new Date(now()).toISOString()),
      [DLQ_ATTRIBUTE.sourceMessageId]: attr(record.messageId),
      [DLQ_ATTRIBUTE.receiveCount]: attr(String(keys.receiveCount)),
      ...(dedupeKey ? { [DLQ_ATTRIBUTE.dedupeKey]: attr(dedupeKey) } : {}),
      ...(snsMessageId ? { [DLQ_ATTRIBUTE.snsMessageId]: attr(snsMessageId) } : {}),
    };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: settings.deadLetterQueueUrl,
        MessageBody: record.body,
        MessageAttributes: attributes,
      }),
    );
    if (dedupeKey) await deps.confirm?.deadLettered(dedupeKey, failure);
    metrics.addMetric(METRIC.permanentFailures, MetricUnit.Count, 1);
    metrics
      .singleMetric()
      .addDimension('reason', failure.code)
      .addMetric(METRIC.permanentFailuresByReason, MetricUnit.Count, 1);
    logger.warn('dead-lettered', {
      decision: 'dead-lettered',
      ...keys,
      ...(dedupeKey ? { dedupeKey } : {}),
      ...(snsMessageId ? { snsMessageId } : {}),
      errorCode: failure.code,
      reason: failure.message,
    });
  }

  /**
   * Retries a record within the retry budget: a delayed copy goes back to the work queue and
   * the record is done with (true); past the budget it is dead-lettered (true). Only when the
   * copy cannot be enqueued does the record itself stay, hidden for the backoff (false).
   */
  async function scheduleRetry(
    record: SQSRecord,
    failure: PipelineError,
    parsed: ParsedRecord | undefined,
  ): Promise<boolean> {
    const keys = recordKeys(record, parsed);
    const failureClass = failure.failureClass === 'permanent' ? 'retryable' : failure.failureClass;
    const state = retryState(record, now());
    const backoff = retryDelaySeconds(
      {
        failureClass,
        code: failure.code,
        failures: failureNumber(state),
        // A send waiting for its SES event asks for its own time (confirm.ts); any other gets the backoff.
        requestedSeconds: requestedRetrySeconds(failure),
      },
      settings,
      random,
    );
    const plan = planRetry(state, backoff, settings.retryBudgetSeconds, now());
    if (plan.kind === 'exhausted') {
      metrics.addMetric(METRIC.retryBudgetExhausted, MetricUnit.Count, 1);
      await deadLetter(
        record,
        new RetryBudgetExhaustedError(failure, plan.ageSeconds, settings.retryBudgetSeconds),
        parsed,
      );
      return true;
    }
    if (failureClass === 'ambiguous') metrics.addMetric(METRIC.ambiguousSends, MetricUnit.Count, 1);
    else if (failureClass === 'systemic') metrics.addMetric(METRIC.systemicFailures, MetricUnit.Count, 1);
    else metrics.addMetric(METRIC.retryableFailures, MetricUnit.Count, 1);
    if (failure.code === 'InProgress') metrics.addMetric(METRIC.inProgressConflicts, MetricUnit.Count, 1);
    const age = ageSeconds(state, now());
    metrics.addMetric(METRIC.retryAge, MetricUnit.Seconds, Math.round(age));

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
      logger.warn('could not re-enqueue the retry; backing off in place', {
        ...keys,
        error: error instanceof Error ? error.message : String(error),
      });
      try {
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: settings.sourceQueueUrl,
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: Math.max(1, plan.delaySeconds),
          }),
        );
      } catch (visibilityError) {
        logger.warn('could not set the retry backoff; the queue visibility timeout applies', {
          ...keys,
          error: visibilityError instanceof Error ? visibilityError.message : String(visibilityError),
        });
      }
    }
    const finalAttempt = !requeued && keys.receiveCount >= settings.maxReceiveCount;
    const line = {
      decision: 'retry' as const,
      ...keys,
      errorClass: failureClass,
      errorCode: failure.code,
      reason: failure.message,
      retryInSeconds: plan.delaySeconds,
      attempt: plan.nextAttempt,
      ageSeconds: Math.round(age),
      requeued,
      ...(finalAttempt ? { note: 'last receive: the redrive policy moves it to the DLQ' } : {}),
      ...(failureClass === 'ambiguous'
        ? { note: 'SES may have accepted this email; the retry can deliver it twice (counted as AmbiguousSends)' }
        : {}),
    };
    if (failureClass === 'systemic') logger.error('sending blocked for the account; backing off', line);
    else if (failureClass === 'retryable' && (failure.code === 'InProgress' || NOT_STARTED.has(failure.code)))
      logger.info('retry', line);
    else logger.warn('retry', line);
    return requeued;
  }

  /** A permanent failure goes to the DLQ (and the record is done); any other is retried. */
  async function settle(record: SQSRecord, failure: PipelineError, parsed: ParsedRecord | undefined) {
    if (failure.failureClass === 'permanent') {
      await deadLetter(record, failure, parsed);
      return;
    }
    if (!(await scheduleRetry(record, failure, parsed))) throw failure;
  }

  /** One `sent` line and one EmailsSent count, whichever path the send took. */
  function reportSent(
    record: SQSRecord,
    parsed: ParsedRecord,
    sesMessageId: string,
    extra: Readonly<Record<string, unknown>> = {},
  ): void {
    metrics.addMetric(METRIC.emailsSent, MetricUnit.Count, 1);
    const line = { decision: 'sent', ...recordKeys(record, parsed), sesMessageId, ...extra };
    // A send off the normal path (fail-open, a late completion) is worth an operator's look.
    if (Object.keys(extra).length > 0) logger.warn('sent', line);
    else logger.info('sent', line);
  }

  /** Sends without the idempotency check (fail-open), counted; a failed send is handled as any other. */
  async function sendUnprotected(record: SQSRecord, parsed: ParsedRecord, storeError: PipelineError) {
    let result: SendResult;
    try {
      result = await sendEmail({ key: parsed.key, email: parsed.email });
    } catch (sendError) {
      await settle(record, classifySesError(sendError), parsed);
      return;
    }
    metrics.addMetric(METRIC.failOpenSends, MetricUnit.Count, 1);
    reportSent(record, parsed, result.sesMessageId, {
      failOpen: true,
      reason: `idempotency store unavailable, sent without the check: ${storeError.message}`,
    });
  }

  /**
   * SES accepted the email; only the completion write failed. Retrying the message would
   * send it again, so it is done with either way; what is left is to record the completion.
   */
  async function completeAfterFailedWrite(record: SQSRecord, parsed: ParsedRecord, error: unknown) {
    // sendEmail stored SES's answer before Powertools tried (and failed) to write it.
    const result = accepted.get(parsed.key) ?? { sesMessageId: 'unknown', sentAt: new Date(now()).toISOString() };
    const attempts = await writeCompletion({ key: parsed.key, email: parsed.email }, result);
    if (attempts !== undefined) {
      reportSent(record, parsed, result.sesMessageId, {
        completionWritten: true,
        note: `the completion write succeeded on retry ${attempts}`,
      });
      return;
    }
    metrics.addMetric(METRIC.completionWriteFailures, MetricUnit.Count, 1);
    reportSent(record, parsed, result.sesMessageId, {
      completionWritten: false,
      note: 'the completion was never written: its claim expires with this invocation, and a copy arriving after that can send again',
      error: causeText(error),
    });
  }

  // Records of one batch that share a key run one after another: the second then finds the
  // first one's completed record (a duplicate, one conditional write) instead of an
  // "in progress" conflict that would cost it a trip back through the queue.
  const inFlight = new Map<string, Promise<unknown>>();

  async function claimAndSend(parsed: ParsedRecord): Promise<SendResult & { duplicate?: true }> {
    const previous = inFlight.get(parsed.key);
    const attempt = (previous ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => sendOnce({ key: parsed.key, email: parsed.email }));
    inFlight.set(parsed.key, attempt);
    try {
      return await attempt;
    } finally {
      if (inFlight.get(parsed.key) === attempt) inFlight.delete(parsed.key);
    }
  }

  async function processRecord(record: SQSRecord): Promise<void> {
    let parsed: ParsedRecord;
    try {
      parsed = parseRecord(record, settings.topicArn);
    } catch (error) {
      await settle(record, unexpectedError(error), undefined);
      return;
    }
    try {
      const result = await claimAndSend(parsed);
      if (!result.duplicate) {
        const confirmed = confirmedBySesEvent.has(parsed.key)
          ? {
              confirmedBySesEvent: true,
              note: 'an earlier attempt was accepted by SES (its SES event is in the ledger): not sent again',
            }
          : {};
        reportSent(record, parsed, result.sesMessageId, confirmed);
        return;
      }
      metrics.addMetric(METRIC.duplicatesSuppressed, MetricUnit.Count, 1);
      logger.info('duplicate suppressed', {
        decision: 'duplicate',
        ...recordKeys(record, parsed),
        sesMessageId: result.sesMessageId,
        firstSentAt: result.sentAt,
      });
    } catch (error) {
      const failure = classifyIdempotencyError(error, parsed.key);
      if (failure === 'completion-write-failed') await completeAfterFailedWrite(record, parsed, error);
      else if (failure.code === 'StoreUnavailable' && settings.failOpen) await sendUnprotected(record, parsed, failure);
      else await settle(record, failure, parsed);
    } finally {
      accepted.delete(parsed.key);
      confirmedBySesEvent.delete(parsed.key);
    }
  }

  return {
    registerContext: (invocation) => {
      context = invocation;
      config.registerLambdaContext(invocation);
    },
    processRecord,
  };
}

/**
 * The Lambda handler over a pipeline: records in parallel, a partial batch
 * response for the ones to retry, metrics flushed after each invocation.
 * One handler serves one invocation at a time, as a Lambda container does.
 */
export function createHandler(
  deps: PipelineDeps,
  options: { readonly processInParallel?: boolean } = {},
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const pipeline = createPipeline(deps);
  const processor = new BatchProcessor(EventType.SQS);
  const processInParallel = options.processInParallel ?? true;
  return async (event, context) => {
    deps.logger.addContext(context);
    pipeline.registerContext(context);
    try {
      return await processPartialResponse(event, pipeline.processRecord, processor, { context, processInParallel });
    } finally {
      deps.metrics.publishStoredMetrics();
    }
  };
}
