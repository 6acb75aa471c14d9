/**
 * The failure classes of the design, each with what the pipeline does about it:
 * - permanent: never retried; the message goes to the DLQ at once with the reason.
 * - retryable: a batch item failure; SQS redelivers after a backoff.
 * - ambiguous: SES may have accepted the email; retried (so nothing is lost) and counted.
 * - systemic: the account cannot send now; a long backoff and its own alarm.
 */
export type FailureClass = 'permanent' | 'retryable' | 'ambiguous' | 'systemic';

export abstract class PipelineError extends Error {
  abstract readonly failureClass: FailureClass;
  constructor(
    /** A short, stable code for metrics and DLQ attributes, e.g. `InvalidField`. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Bad input or a request SES will never accept. Retrying cannot help. */
export class PermanentError extends PipelineError {
  readonly failureClass = 'permanent' as const;
  override readonly name = 'PermanentError';
}

/** A passing condition (throttling, store outage, a concurrent attempt). */
export class RetryableError extends PipelineError {
  readonly failureClass = 'retryable' as const;
  override readonly name = 'RetryableError';
}

/** SES may or may not have accepted the send (timeout, reset, 5xx). */
export class AmbiguousSendError extends PipelineError {
  readonly failureClass = 'ambiguous' as const;
  override readonly name = 'AmbiguousSendError';
}

/** The account cannot send for a while (paused, suspended, daily quota). */
export class SystemicError extends PipelineError {
  readonly failureClass = 'systemic' as const;
  override readonly name = 'SystemicError';
}
