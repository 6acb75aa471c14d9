/**
 * Shared by the stages (send, claim, outcome): every failure, in one place, mapped to one of
 * the design's four classes (kernel/errors.ts): permanent, retryable, ambiguous, systemic. SES
 * errors and errors of the idempotency layer (Powertools, DynamoDB) are both here.
 */
import { redactAddresses } from '../kernel/contract/address';
import { AmbiguousSendError, PermanentError, PipelineError, RetryableError, SystemicError } from '../kernel/errors';

// ---------------------------------------------------------------- SES

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

export interface ErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

export function shape(error: unknown): ErrorShape {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : {};
}

/** True when the error proves the request never reached SES (so a retry cannot duplicate). */
export function provesNotSent(error: unknown): boolean {
  const e = shape(error);
  if (e.code && NOT_SENT_CODES.has(e.code)) return true;
  // The Node HTTP handler's connection timeout: no socket was ever connected.
  return e.name === 'TimeoutError' && /did not establish a connection/.test(e.message ?? '');
}

export function isDailyQuota(e: ErrorShape): boolean {
  return /daily (message|sending) quota/i.test(e.message ?? '');
}

/** Maps any SendEmail failure to one failure class, with a code and a readable reason. */
export function classifySesError(error: unknown): PipelineError {
  if (error instanceof PipelineError) return error;
  const e = shape(error);
  const name = e.name ?? 'Error';
  // SES messages can quote addresses ("... not verified: ada@example.com"); reasons are logged.
  const detail = e.message ? `${name}: ${redactAddresses(e.message)}` : name;
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

// ---------------------------------------------------------------- idempotency store

/** Maps errors from the idempotency layer to our failure classes. */
export function classifyIdempotencyError(
  error: unknown,
  key: string | undefined,
): PipelineError | 'completion-write-failed' {
  if (error instanceof PipelineError) return error;
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  switch (name) {
    case 'IdempotencyValidationError':
      return new PermanentError(
        'KeyReusedWithDifferentContent',
        `the dedupe key ${JSON.stringify(key)} was already used for a different email; nothing was sent`,
        { cause: error },
      );
    case 'IdempotencyAlreadyInProgressError':
      return new RetryableError('InProgress', 'another attempt with the same key is in progress', { cause: error });
    case 'IdempotencyKeyError':
      return new PermanentError('MissingIdempotencyKey', 'the message has no dedupe key', { cause: error });
    case 'IdempotencyPersistenceLayerError':
      if (message.startsWith('Failed to update success record')) return 'completion-write-failed';
      if (message.startsWith('Failed to delete record')) {
        // The send failed and releasing the claim failed too: the claim expires with the invocation.
        return new RetryableError('ClaimReleaseFailed', `could not release the claim (${causeText(error)})`, {
          cause: error,
        });
      }
      return new RetryableError('StoreUnavailable', `the idempotency store is unavailable (${causeText(error)})`, {
        cause: error,
      });
    default:
      return unexpectedError(error);
  }
}

/** Anything no rule knows: retried (never dropped), and visible in the logs by its code. */
export function unexpectedError(error: unknown): PipelineError {
  if (error instanceof PipelineError) return error;
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  return new RetryableError('Unexpected', `unexpected error: ${name}: ${message}`, { cause: error });
}

export function causeText(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause ?? 'unknown cause');
}
