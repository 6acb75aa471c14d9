/**
 * What happens to one queue record: parse, claim the key, send, and turn every
 * failure into one decision (sent, duplicate, dead-lettered, retry), carried out
 * by dead-letter.ts and retry.ts and reported by report.ts. The clients come in
 * as parameters so tests can run this against real emulators.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { SendConfirmation } from './claim/persistence';
import { classifyIdempotencyError, classifySesError, unexpectedError } from './classify';
import { buildSendEmailInput } from './send/email';
import { PipelineError, RetryableError } from '../kernel/errors';
import { CircuitBreaker } from './send/breaker';
import { containerShare, SendPacer } from './send/pacing';
import { COMPLETION_RETRY_MARGIN_MS, SEND_DEADLINE_MARGIN_MS } from './outcome/backoff';
import { createDeadLetter } from './outcome/dead-letter';
import { parseRecord, type ParsedRecord } from './parse';
import type { EmailMessage } from '../kernel/contract';
import type { QueueClient } from './outcome/queue-record';
import { createReport } from './outcome/report';
import { createRetry } from './outcome/retry';
import type { HandlerSettings } from '../kernel/environment';
import { METRIC } from '../kernel/names';

/** What SES said for an email, stored with the idempotency record and returned to duplicates. */
export interface SendResult {
  readonly sesMessageId: string;
  readonly sentAt: string;
  /** The attempt SES accepted: the ledger binds only events of this SES message id to it. */
  readonly attemptId?: string;
}

interface SendRequest {
  readonly key: string;
  readonly email: EmailMessage;
}

interface SendClient {
  send(command: SendEmailCommand): Promise<{ MessageId?: string | undefined }>;
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
    const attempt = deps.confirm?.attemptOf(request.key);
    const started = now();
    let response: { MessageId?: string | undefined };
    try {
      response = await ses.send(
        new SendEmailCommand(buildSendEmailInput(request.email, settings, request.key, attempt)),
      );
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
    const result = {
      sesMessageId: response.MessageId ?? 'unknown',
      sentAt: new Date(now()).toISOString(),
      ...(attempt ? { attemptId: attempt.attemptId } : {}),
    };
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

  const report = createReport(logger, metrics);
  const deadLetter = createDeadLetter({
    deadLetterQueueUrl: settings.deadLetterQueueUrl,
    sqs,
    report,
    now,
    confirm: deps.confirm,
  });
  const scheduleRetry = createRetry({ settings, sqs, report, deadLetter, now, random });

  /** A permanent failure goes to the DLQ (and the record is done); any other is retried. */
  async function settle(record: SQSRecord, failure: PipelineError, parsed: ParsedRecord | undefined) {
    if (failure.failureClass === 'permanent') {
      await deadLetter(record, failure, parsed);
      return;
    }
    if (!(await scheduleRetry(record, failure, parsed))) throw failure;
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
    report.sentWithoutCheck(record, parsed, result.sesMessageId, storeError);
  }

  /**
   * SES accepted the email; only the completion write failed. Retrying the message would
   * send it again, so it is done with either way; what is left is to record the completion.
   */
  async function completeAfterFailedWrite(record: SQSRecord, parsed: ParsedRecord, error: unknown) {
    // sendEmail stored SES's answer before Powertools tried (and failed) to write it.
    const result = accepted.get(parsed.key) ?? { sesMessageId: 'unknown', sentAt: new Date(now()).toISOString() };
    const attempts = await writeCompletion({ key: parsed.key, email: parsed.email }, result);
    report.sentAfterFailedWrite(record, parsed, result.sesMessageId, attempts, error);
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
        report.sent(record, parsed, result.sesMessageId, confirmed);
        return;
      }
      report.duplicate(record, parsed, result);
    } catch (error) {
      const failure = classifyIdempotencyError(error, parsed.key);
      if (failure === 'completion-write-failed') await completeAfterFailedWrite(record, parsed, error);
      else if (failure.code === 'StoreUnavailable' && settings.failOpen) await sendUnprotected(record, parsed, failure);
      else await settle(record, failure, parsed);
    } finally {
      accepted.delete(parsed.key);
      confirmedBySesEvent.delete(parsed.key);
      // A later record of this batch with the same key may hold a claim of its own by now.
      if (!inFlight.has(parsed.key)) deps.confirm?.done(parsed.key);
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
