/**
 * The contract's `sendAt` (v1.2): the instant an email may be sent at the earliest, an RFC 3339
 * date-time with an offset (`2026-12-24T08:00:00Z`, `2026-12-24T09:00:00+01:00`). Its format is
 * the contract's (declared here, checked by validate.ts, in the JSON Schema as a pattern); how far
 * ahead it may be is a setting of the pipeline (`maxScheduleAheadSeconds`), checked against a
 * reference time by {@link sendAtRangeProblem}: the publisher client's clock, and the send
 * function's time the message reached the queue. Pure: no clock of its own.
 */

/**
 * RFC 3339 date-time (section 5.6) with `T` and `Z` upper-case, a fraction of up to 9 digits and
 * an explicit offset: no local times, which would mean something else on every machine.
 */
export const SEND_AT_PATTERN =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** What a `sendAt` that does not match {@link SEND_AT_PATTERN} is reported as. */
export const SEND_AT_FORMAT_REASON =
  'must be an RFC 3339 date-time with an offset, e.g. 2026-12-24T08:00:00Z or 2026-12-24T09:00:00+01:00';

/** The years a `sendAt` may name: nothing of ours runs past 2100. */
export const SEND_AT_YEARS = { from: 2000, to: 2099 } as const;

/** The instant of a `sendAt` in epoch milliseconds, or why it is not one. */
export function readSendAt(value: string): { ok: true; ms: number } | { ok: false; reason: string } {
  if (!SEND_AT_PATTERN.test(value)) return { ok: false, reason: SEND_AT_FORMAT_REASON };
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  // The pattern allows day 31 of every month: the calendar decides (2026-02-30 is no day).
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    return { ok: false, reason: `names no calendar day (${value.slice(0, 10)})` };
  }
  if (year < SEND_AT_YEARS.from || year > SEND_AT_YEARS.to) {
    return { ok: false, reason: `must be a time from ${SEND_AT_YEARS.from} to ${SEND_AT_YEARS.to}` };
  }
  return { ok: true, ms: Date.parse(value) };
}

/**
 * Why `sendAtMs` is too far after `referenceMs` (epoch ms; the time the message was published or
 * reached the queue), or undefined when it is within `maxAheadSeconds`. A time in the past is
 * fine: the email goes out at once.
 */
export function sendAtRangeProblem(sendAtMs: number, referenceMs: number, maxAheadSeconds: number): string | undefined {
  const aheadSeconds = (sendAtMs - referenceMs) / 1000;
  if (aheadSeconds <= maxAheadSeconds) return undefined;
  return maxAheadSeconds === 0
    ? 'must not be in the future: this pipeline does not schedule (maxScheduleAheadSeconds=0)'
    : `must be at most ${maxAheadSeconds} s after the message was published (maxScheduleAheadSeconds), got ${Math.ceil(aheadSeconds)} s`;
}
