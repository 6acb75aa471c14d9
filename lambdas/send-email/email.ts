/**
 * SES v2: building the SendEmail request, classifying its failures, and the
 * SDK retry policy that never repeats a send SES may already have accepted.
 */
import { createHash } from 'node:crypto';
import type { SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import type { RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { AmbiguousSendError, PermanentError, PipelineError, RetryableError, SystemicError } from './errors';
import type { EmailMessage } from './message';

/** The SES message tag that carries the dedupe key (searchable in SES event destinations). */
export const DEDUPE_TAG = 'dedupe-key';

export interface SenderSettings {
  readonly senderAddress: string;
  readonly configurationSetName?: string;
}

/**
 * SES tag values allow only letters, digits, `_` and `-` (256 at most). A key
 * outside that alphabet is tagged by its SHA-256 instead, prefixed `sha256-`.
 */
export function dedupeTagValue(key: string): string {
  if (/^[A-Za-z0-9_-]{1,256}$/.test(key)) return key;
  return `sha256-${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/** Builds the SendEmail request for one validated email. */
export function buildSendEmailInput(email: EmailMessage, sender: SenderSettings, key: string): SendEmailCommandInput {
  const content: SendEmailCommandInput['Content'] = email.template
    ? {
        Template: {
          TemplateName: email.template.name,
          TemplateData: JSON.stringify(email.template.data),
        },
      }
    : {
        Simple: {
          Subject: { Data: email.subject ?? '', Charset: 'UTF-8' },
          Body: {
            ...(email.text !== undefined ? { Text: { Data: email.text, Charset: 'UTF-8' } } : {}),
            ...(email.html !== undefined ? { Html: { Data: email.html, Charset: 'UTF-8' } } : {}),
          },
        },
      };
  return {
    FromEmailAddress: sender.senderAddress,
    Destination: {
      ToAddresses: [...email.to],
      ...(email.cc.length ? { CcAddresses: [...email.cc] } : {}),
      ...(email.bcc.length ? { BccAddresses: [...email.bcc] } : {}),
    },
    ...(email.replyTo.length ? { ReplyToAddresses: [...email.replyTo] } : {}),
    Content: content,
    EmailTags: [
      { Name: DEDUPE_TAG, Value: dedupeTagValue(key) },
      ...Object.entries(email.tags).map(([Name, Value]) => ({ Name, Value })),
    ],
    ...(sender.configurationSetName ? { ConfigurationSetName: sender.configurationSetName } : {}),
  };
}

// ---------------------------------------------------------------- classification

/** SES errors that say the request is wrong and will stay wrong. */
const PERMANENT_SES_ERRORS = new Set([
  'MessageRejected',
  'BadRequestException',
  'NotFoundException',
  'MailFromDomainNotVerifiedException',
  'InvalidParameterValue',
]);

/** SES errors that say the account cannot send for now. */
const SYSTEMIC_SES_ERRORS = new Set(['AccountSuspendedException', 'SendingPausedException']);

/** Network errors raised before the request reached SES: it cannot have been accepted. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface ErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

function shape(error: unknown): ErrorShape {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : {};
}

/** True when the error proves the request never reached SES (so a retry cannot duplicate). */
export function provesNotSent(error: unknown): boolean {
  const e = shape(error);
  if (e.code && NOT_SENT_CODES.has(e.code)) return true;
  // The Node HTTP handler's connection timeout: no socket was ever connected.
  return e.name === 'TimeoutError' && /did not establish a connection/.test(e.message ?? '');
}

function isDailyQuota(e: ErrorShape): boolean {
  return /daily (message|sending) quota/i.test(e.message ?? '');
}

/** Maps any SendEmail failure to one failure class, with a code and a readable reason. */
export function classifySesError(error: unknown): PipelineError {
  if (error instanceof PipelineError) return error;
  const e = shape(error);
  const name = e.name ?? 'Error';
  const detail = e.message ? `${name}: ${e.message}` : name;
  const status = e.$metadata?.httpStatusCode;
  if (PERMANENT_SES_ERRORS.has(name)) {
    return new PermanentError(name, `SES refused the email (${detail})`, { cause: error });
  }
  if (SYSTEMIC_SES_ERRORS.has(name)) {
    return new SystemicError(name, `SES sending is unavailable for the account (${detail})`, { cause: error });
  }
  if (name === 'TooManyRequestsException' || name === 'LimitExceededException' || status === 429) {
    if (isDailyQuota(e)) {
      return new SystemicError('DailyQuotaExceeded', `SES daily sending quota reached (${detail})`, { cause: error });
    }
    return new RetryableError('Throttled', `SES throttled the send (${detail})`, { cause: error });
  }
  if (provesNotSent(error)) {
    return new RetryableError('SesUnreachable', `SES could not be reached; nothing was sent (${detail})`, {
      cause: error,
    });
  }
  // SES v2 answers 404 for a missing template or identity and 400 for a bad request, whatever
  // name the error carries (emulators and proxies may send none).
  if (status === 404) {
    return new PermanentError('NotFoundException', `SES refused the email (${detail})`, { cause: error });
  }
  if (status === 400) {
    return new PermanentError('BadRequestException', `SES refused the email (${detail})`, { cause: error });
  }
  if (e.$fault === 'client' && status !== undefined && status < 500) {
    // Access denied, a bad signature and the like: a configuration problem an operator can fix.
    return new RetryableError(name, `SES refused the request (${detail})`, { cause: error });
  }
  // Timeouts, resets and 5xx: SES may have accepted the email before the failure.
  return new AmbiguousSendError('AmbiguousSend', `SES outcome unknown (${detail})`, { cause: error });
}

// ---------------------------------------------------------------- SDK retries

/**
 * The SES client's retry policy: retry throttling and failures that prove the
 * request never reached SES; never retry timeouts, resets or 5xx, since SES
 * has no idempotency token and a blind retry could send the email twice.
 */
export class SafeSesRetryStrategy implements RetryStrategyV2 {
  constructor(
    private readonly maxAttempts = 3,
    private readonly baseDelayMs = 100,
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(): Promise<RetryToken> {
    return this.token(0);
  }

  async refreshRetryTokenForRetry(token: RetryToken, errorInfo: RetryErrorInfo): Promise<RetryToken> {
    const attempt = token.getRetryCount() + 1;
    if (attempt >= this.maxAttempts || !SafeSesRetryStrategy.isSafeToRetry(errorInfo)) {
      throw new Error('No retry: not safe or attempts used up');
    }
    return this.token(attempt);
  }

  recordSuccess(): void {}

  static isSafeToRetry(errorInfo: RetryErrorInfo): boolean {
    if (errorInfo.errorType === 'THROTTLING') return !isDailyQuota(shape(errorInfo.error));
    return provesNotSent(errorInfo.error);
  }

  private token(retryCount: number): RetryToken {
    const cap = this.baseDelayMs * 2 ** retryCount;
    const delay = retryCount === 0 ? 0 : Math.round(cap / 2 + (this.random() * cap) / 2);
    return { getRetryCount: () => retryCount, getRetryDelay: () => delay };
  }
}
