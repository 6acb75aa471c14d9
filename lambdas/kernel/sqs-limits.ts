/**
 * SQS's own limits, which the settings' rules (lib/settings), the send function's retries
 * (send-email) and the scheduled mail's hops (send-email/schedule.ts, schedule/) build on. Facts
 * of the service, not settings; and the one rule of a hop's delay that follows from them.
 */

/** The longest `DelaySeconds` of a message: a retry's copy waits at most this long. */
export const SQS_MAX_DELAY_SECONDS = 900;

/** The longest a queue keeps a message (the DLQs keep theirs this long). */
export const SQS_MAX_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/** The longest visibility timeout (ChangeMessageVisibility). */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * How long the next hop of a message waiting for `targetMs` (epoch ms) waits: the seconds left,
 * rounded up (never early), at least 1 and at most SQS's largest delay.
 */
export function hopDelaySeconds(targetMs: number, nowMs: number): number {
  return Math.max(1, Math.min(SQS_MAX_DELAY_SECONDS, Math.ceil((targetMs - nowMs) / 1000)));
}
