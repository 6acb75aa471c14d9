/**
 * What a callback try's answer means, and when the next try comes. Only a 2xx delivers. Timeouts,
 * connection errors, 408, 429 and 5xx are retried with exponential backoff and full jitter,
 * honouring `Retry-After`, until the retry window (24 h by default) from the first try is spent;
 * the last try comes at the window's end. 410 Gone disables the callback; any other answer
 * (3xx: redirects are not followed; 4xx) is not retried. Pure: the caller passes the clock and
 * the random source.
 */
import { SQS_MAX_VISIBILITY_SECONDS } from '../sqs-limits';

/** The longest wait between two tries, unless `Retry-After` asks more (up to the SQS visibility limit). */
export const CALLBACK_RETRY_CAP_SECONDS = 4 * 60 * 60;

/** What one try came to. */
export type TryResult =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'gone'; readonly status: 410 }
  | { readonly kind: 'retry'; readonly result: string; readonly retryAfterSeconds?: number }
  | { readonly kind: 'refused'; readonly result: string };

/** The seconds a `Retry-After` value asks for (delta-seconds or an HTTP-date), or undefined. */
export function retryAfterSeconds(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** The meaning of an HTTP answer. */
export function answerResult(
  status: number,
  statusText: string,
  retryAfter: string | undefined,
  nowMs: number,
): TryResult {
  const shown = `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status };
  if (status === 408 || status === 429 || status >= 500) {
    const wait = retryAfterSeconds(retryAfter, nowMs);
    return { kind: 'retry', result: shown, ...(wait !== undefined ? { retryAfterSeconds: wait } : {}) };
  }
  const why = status >= 300 && status < 400 ? 'redirects are not followed' : 'not retried';
  return { kind: 'refused', result: `${shown}: ${why}` };
}

export interface RetryPlan {
  /** Seconds from the first try during which tries go on. */
  readonly windowSeconds: number;
  /** The first wait; each later one is about twice as long. */
  readonly baseSeconds: number;
}

/** Either the next try's wait (seconds), or that the window is spent. */
export type NextTry = { readonly retryInSeconds: number } | { readonly giveUp: string };

/**
 * When to try again after failed try number `tries` (1 = the first) that came `elapsedSeconds`
 * after the first try: `base × 2^(tries-1)` with full jitter (half to all of it), at least
 * `Retry-After`, at most {@link CALLBACK_RETRY_CAP_SECONDS} (a `Retry-After` up to the SQS
 * visibility limit), and never past the window's end, where the last try comes.
 */
export function nextTry(
  plan: RetryPlan,
  tries: number,
  elapsedSeconds: number,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): NextTry {
  const left = plan.windowSeconds - elapsedSeconds;
  if (left <= 0) return { giveUp: `retry window of ${plan.windowSeconds} s spent (${tries} tries)` };
  const exponential = Math.min(CALLBACK_RETRY_CAP_SECONDS, plan.baseSeconds * 2 ** Math.min(tries - 1, 30));
  const jittered = Math.ceil(exponential * (0.5 + random() * 0.5));
  const asked = Math.min(SQS_MAX_VISIBILITY_SECONDS, Math.max(jittered, retryAfter ?? 0));
  return { retryInSeconds: Math.max(1, Math.min(asked, Math.ceil(left))) };
}
