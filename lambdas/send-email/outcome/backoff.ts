/**
 * The outcome stage's backoff: how long a failed record waits before its next attempt.
 * Pure: no clients.
 */
import type { FailureClass } from '../../kernel/errors';
import { MAX_DELAY_SECONDS } from './retry-budget';
import type { HandlerSettings } from '../../kernel/environment';

/** Backoff caps, in seconds (retryable and ambiguous: RETRY_CAP_SECONDS, default 300; none above SQS's 900 s delay). */
export const BACKOFF_CAP_SECONDS = { systemic: MAX_DELAY_SECONDS } as const;

/** Congestion, not an outage: the backoff does not grow with the attempts. */
const FIRST_BACKOFF_ONLY = new Set(['PacingDeadline']);

/**
 * Jittered exponential backoff: the nominal delay doubles with each receive up
 * to the cap; the visibility is drawn from its upper half so that retries of a
 * burst spread out but never come back at once.
 */
export function backoffSeconds(
  baseSeconds: number,
  capSeconds: number,
  receiveCount: number,
  random: () => number,
): number {
  const nominal = Math.min(capSeconds, baseSeconds * 2 ** Math.max(0, receiveCount - 1));
  return Math.max(1, Math.round(nominal / 2 + (random() * nominal) / 2));
}

/** A failure to retry, as the backoff sees it. */
export interface RetryCause {
  readonly failureClass: Exclude<FailureClass, 'permanent'>;
  readonly code: string;
  /** Failures of the message so far, every copy counted (retry-budget.ts failureNumber). */
  readonly failures: number;
  /** Seconds the failure asks to wait itself (a send waiting for its SES event, confirm.ts). */
  readonly requestedSeconds: number | undefined;
}

/**
 * Seconds before the next attempt: what the failure asks for, else the backoff
 * of its class (systemic: SYSTEMIC_RETRY_SECONDS up to SQS's limit; the others:
 * RETRY_BASE_SECONDS up to RETRY_CAP_SECONDS), never above SQS's 900 s delay.
 */
export function retryDelaySeconds(
  cause: RetryCause,
  settings: Pick<HandlerSettings, 'retryBaseSeconds' | 'retryCapSeconds' | 'systemicRetrySeconds'>,
  random: () => number,
): number {
  if (cause.requestedSeconds !== undefined) return Math.min(MAX_DELAY_SECONDS, cause.requestedSeconds);
  const systemic = cause.failureClass === 'systemic';
  const base = systemic ? settings.systemicRetrySeconds : settings.retryBaseSeconds;
  const cap = systemic ? BACKOFF_CAP_SECONDS.systemic : settings.retryCapSeconds;
  const exponent = FIRST_BACKOFF_ONLY.has(cause.code) ? 1 : cause.failures;
  return backoffSeconds(base, Math.min(MAX_DELAY_SECONDS, Math.max(base, cap)), exponent, random);
}
