/**
 * What the send stage asks of a pacer: wait for a send's recipients' worth of SES's rate, and hear of a
 * throttle. Two pacers answer it: a lane of the shared pacer (shared-pacer.ts, the rate leased from
 * the lanes' items) and the static share (token-bucket.ts, its fallback).
 */

/** What the send stage asks of a pacer. */
export interface Pacer {
  /**
   * Waits for `recipients` tokens; false, with nothing taken, when they would not come before
   * `deadline`. `team`: the email's team, whose high-priority mail paces on its own lane.
   */
  acquire(recipients: number, deadline: number, team?: string): Promise<boolean>;
  /** SES throttled a send despite the pacing. */
  onThrottle(): void;
}
