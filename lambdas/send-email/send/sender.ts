/**
 * The send stage: one SES SendEmail, held back while the circuit breaker on SES is open
 * (breaker.ts) and paced (shared-pacer.ts, or the static share of token-bucket.ts); the request is
 * email.ts's. SES's answer is classified (classify.ts) and fed back to the breaker and the pacer.
 * A send that is not started fails as "not sent" for certain (CircuitOpen, PacingDeadline).
 */
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { EmailMessage } from '../../kernel/contract';
import type { HandlerSettings } from '../../kernel/environment';
import { RetryableError } from '../../kernel/errors';
import { METRIC } from '../../kernel/names';
import { classifySesError } from '../classify';
import type { CircuitBreaker } from './breaker';
import { createAttachmentObjects, type AttachmentObjects } from './attachments';
import { buildSendEmailInput, type AttemptTags, type SenderSettings } from './email';
import type { Pacer } from './pacer';

/** A send starts only if it can finish (SES timeout plus this) before the invocation's deadline. */
export const SEND_DEADLINE_MARGIN_MS = 1000;

/** What is sent: a validated email under its dedupe key. */
export interface SendRequest {
  readonly key: string;
  readonly email: EmailMessage;
  /** The team whose topic the email came through (its high-priority mail paces on the team's lane). */
  readonly team?: string;
}

/** What SES said for an email, stored with the idempotency record and returned to duplicates. */
export interface SendResult {
  readonly sesMessageId: string;
  readonly sentAt: string;
  /** The attempt SES accepted: the ledger binds only events of this SES message id to it. */
  readonly attemptId?: string;
}

/** The SES call the send stage makes (a subset of SESv2Client). */
export interface SendClient {
  send(command: SendEmailCommand): Promise<{ MessageId?: string | undefined }>;
}

/** A send let through by the breaker and the pacer (Sender.admit). */
export interface Admitted {
  /** The breaker's half-open probe: its answer closes or reopens the circuit. */
  readonly probe: boolean;
}

export interface SenderDeps {
  /** Who sends (the request's From and configuration set, email.ts), SES's timeout and the rate a refusal names. */
  readonly settings: SenderSettings & Pick<HandlerSettings, 'sesTimeoutMs' | 'maxSendRate'>;
  readonly ses: SendClient;
  /** Per container, as a Lambda container keeps it between invocations (shared-pacer.ts, token-bucket.ts). */
  readonly pacer: Pacer;
  /** Per container too (CircuitBreaker.forSettings). */
  readonly breaker: CircuitBreaker;
  readonly metrics: Metrics;
  readonly now: () => number;
  /** Reads the email's files for the request (send/attachments.ts). @default inline files only */
  readonly attachments?: AttachmentObjects;
}

/** The send stage of one container. */
export interface Sender {
  /**
   * The email as the claim hashes it: with the ETag of each object it attaches (send/attachments.ts),
   * so a changed object under a reused key is refused as other content.
   */
  prepare(email: EmailMessage): Promise<EmailMessage>;
  /**
   * Holds a send back while the breaker is open; waits for its share of the send rate, no later
   * than the invocation's deadline allows (`remainingMs`: the invocation's time left).
   */
  admit(request: SendRequest, remainingMs: () => number): Promise<Admitted>;
  /**
   * Sends an admitted email, tagged with its attempt (binding.ts) when there is one. A failure
   * is thrown classified (classify.ts); throttles slow the pacer, and failures of SES itself
   * (ambiguous, throttled, unreachable) open the breaker.
   */
  send(request: SendRequest, admitted: Admitted, attempt: AttemptTags | undefined): Promise<SendResult>;
}

export function createSender(deps: SenderDeps): Sender {
  const { settings, ses, pacer, breaker, metrics, now } = deps;
  const attachments = deps.attachments ?? createAttachmentObjects(undefined);
  const sender: Sender = {
    prepare: (email) => attachments.fingerprint(email),

    async admit(request, remainingMs) {
      const permit = breaker.permit();
      if (!permit.start) {
        metrics.addMetric(METRIC.sendsHeldByBreaker, MetricUnit.Count, 1);
        throw new RetryableError(
          'CircuitOpen',
          `not sent: SES failed recently, new sends are held for ${Math.ceil(permit.retryInMs / 1000)} s more`,
        );
      }
      const recipients = request.email.to.length + request.email.cc.length + request.email.bcc.length;
      const deadline = now() + remainingMs() - settings.sesTimeoutMs - SEND_DEADLINE_MARGIN_MS;
      const paced = await pacer.acquire(recipients, deadline, request.team);
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
    },

    async send(request, { probe }, attempt) {
      // The files' bytes are held from the read until SES has answered (the request holds them
      // base64 until then): the container's byte budget bounds them across the batch's records.
      const release = await attachments.reserve(request.email);
      try {
        return await sendHolding(request, probe, attempt);
      } finally {
        release();
      }
    },
  };
  return sender;

  async function sendHolding(
    request: SendRequest,
    probe: boolean,
    attempt: AttemptTags | undefined,
  ): Promise<SendResult> {
    let parts: Awaited<ReturnType<AttachmentObjects['parts']>>;
    try {
      parts = await attachments.parts(request.email);
    } catch (error) {
      breaker.onAbandoned(probe);
      throw error;
    }
    const started = now();
    let response: { MessageId?: string | undefined };
    try {
      response = await ses.send(
        new SendEmailCommand(buildSendEmailInput(request.email, settings, request.key, attempt, parts)),
      );
      breaker.onSuccess(probe);
    } catch (error) {
      const failure = classifySesError(error);
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
    return {
      sesMessageId: response.MessageId ?? 'unknown',
      sentAt: new Date(now()).toISOString(),
      ...(attempt ? { attemptId: attempt.attemptId } : {}),
    };
  }
}
