/**
 * The cancel mark: what cancelling a key writes in its place in the send function's idempotency
 * table. It is a COMPLETED Powertools record of the key whose result (its `data`) says
 * `cancelled`, so that every later copy of the key meets it at its claim, exactly as a copy of a
 * sent email meets the sent one, and is suppressed without a send (the claim stage's persistence
 * layer takes it whatever the copy's content). It is written conditionally, only where the key
 * has no live record (lambdas/status/cancel.ts): a key claimed, in progress or sent first is not
 * cancelled; a key cancelled first is never claimed. One conditional write decides the race.
 * Pure: no SDK, no clock.
 */

/** The result a cancel mark stores in place of SES's answer. */
export interface CancelMark {
  readonly cancelled: true;
  /** When it was cancelled (ISO 8601). */
  readonly cancelledAt: string;
  /** Who cancelled it: the caller's IAM ARN as the function URL authenticated it, or `local (...)`. */
  readonly cancelledBy: string;
}

/** The stored result as a cancel mark, or undefined when it is anything else (SES's answer). */
export function cancelMarkOf(data: unknown): CancelMark | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { cancelled, cancelledAt, cancelledBy } = data as Record<string, unknown>;
  if (cancelled !== true || typeof cancelledAt !== 'string' || typeof cancelledBy !== 'string') return undefined;
  return { cancelled, cancelledAt, cancelledBy };
}

/** The `detail` of a `Cancelled` ledger event: by whom (recipient-free, at most 200 characters). */
export function cancelDetail(mark: CancelMark): string {
  return `by ${mark.cancelledBy}`.slice(0, 200);
}
