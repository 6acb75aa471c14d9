/**
 * The pacer's policy, pure: no timers, no I/O, no SDK. The rate is split in lanes, each one item of
 * the shared lease: `high` (the high-priority reserve), `normal` (the work queue's) and, with teams,
 * `team:<name>` and `high:<name>` (each team's queue and high-priority mail, at its share). From the
 * clock's now, the leased slots a container holds, the sends waiting in each lane and what the lanes' items were last found to hold,
 * {@link step} decides which sends go now, which give up, which lane items to lease or borrow slots
 * from, and when to look again; the functions after it say how a store failure or a throttle
 * changes that, and whether a value read from a lane's item is one no lease could have
 * written. shared-pacer.ts does what they say; the unit tests drive them on a virtual clock. The
 * pacer's tuning is named here, in one place.
 */
import { kindOf, PACING_HEADROOM, siblingOf, type LaneId } from './lane-rates';

// The tuning.

/** How far ahead a lane borrows the other's idle slots: the longest a high-priority send waits for them. */
export const BORROW_PERIOD_MS = 800;
/**
 * How long after the end of a lane's own last lease its slots may be borrowed: longer than the
 * pause between two batches of a queue with mail waiting (delete, receive, claims), so the lane of a
 * team whose mail is waiting is never taken in such a pause.
 */
export const OWNER_GRACE_MS = 1000;
/** High-priority sends whose slots (leased for bulk mail) are further off than this lease their own. */
export const BORROW_THRESHOLD_MS = 100;
/**
 * Sends holding slots of their own lane further off than this also borrow the other lane's idle
 * ones. The lease horizon keeps their own slots near, so the ones a borrow frees are soon taken
 * by the container's next sends, and few are left unused when a burst ends.
 */
export const FAR_SLOT_MS = 300;
/** How long a container keeps to its static share after the table failed. */
export const FALLBACK_MS = 30_000;
/** How long a throttle pauses this container's sends. */
export const THROTTLE_PAUSE_MS = 1000;
/** The longest the scheduler sleeps without looking at new sends. */
export const POLL_MS = 25;
/**
 * How long a send may always wait for its slot, whatever its deadline says: a lease takes a round
 * trip and the next slot, and a send from the static bucket never waits when it holds tokens (an
 * invocation short of time still sends).
 */
export const MIN_WAIT_MS = 250;
/**
 * How far ahead a lease may start: the line of slots leased and not yet used stays about this
 * long (plus one lease), so sends wait unfunded rather than holding slots seconds ahead. Then the
 * other lane's idle slots go to sends that have none, and a container that stops getting work
 * leaves few slots unused behind it (each a gap in the rate when a burst ends).
 */
export const LEASE_HORIZON_MS = 1000;
/** Most slots one lease asks for. */
export const MAX_LEASE = 100;
/** A lease never reaches further ahead than this, whatever deadline a caller gives. */
export const MAX_LEASE_DEADLINE_MS = 60_000;
/** How far the clocks of two containers may differ (Lambda's are kept by NTP, well within this). */
export const CLOCK_SKEW_MS = 5000;
/** How long a container keeps to its static share after finding an implausible item it could not repair. */
export const IMPLAUSIBLE_FALLBACK_MS = 5000;
/** The furthest in the past a slot may be used (see {@link slotLagMs}). */
export const MAX_SLOT_LAG_MS = 500;
/** Of SES's one second of burst, what is left for requests that arrive bunched (see {@link slotLagMs}). */
export const BUNCHING_MS = 100;

/**
 * How far in the past a slot may still be used: a send at a stale slot joins the sends of the slots
 * after it, and SES allows a burst of one second of its rate. Rounding takes one recipient of it per
 * lane (`lanes`, two without teams), and BUNCHING_MS is left for requests that arrive bunched; at
 * most MAX_SLOT_LAG_MS.
 */
export function slotLagMs(maxSendRate: number, lanes = 2): number {
  const rate = maxSendRate * PACING_HEADROOM;
  return Math.max(0, Math.min(MAX_SLOT_LAG_MS, ((maxSendRate - lanes) / rate) * 1000 - BUNCHING_MS));
}

/**
 * The furthest ahead of now a lease leaves a lane's `next`, on a lane of slots `intervalMs` apart:
 * a lease starts at most LEASE_HORIZON_MS ahead and spans at most MAX_LEASE slots, and the
 * container that wrote it may run CLOCK_SKEW_MS ahead. Anything beyond is no lease's.
 */
export function maxLeaseAheadMs(intervalMs: number): number {
  return Math.ceil(LEASE_HORIZON_MS + MAX_LEASE * intervalMs + CLOCK_SKEW_MS);
}

/**
 * What is implausible about a lane's `next` as a failed write found it (`next`: the value when it is
 * a number; `found`: the stored value as it is), or undefined when nothing is: not a number, not
 * finite, below zero, or further ahead than `maxAheadMs` (see {@link maxLeaseAheadMs}). A lease that
 * finds such a value repairs it.
 */
export function implausibility(
  read: { readonly next?: number; readonly found?: unknown },
  now: number,
  maxAheadMs: number,
): string | undefined {
  const { next, found } = read;
  if (next === undefined) return found === undefined ? undefined : `not a number: ${describe(found)}`;
  if (!Number.isFinite(next)) return `not a finite number: ${next}`;
  if (next < 0) return `below zero: ${next}`;
  if (next > now + maxAheadMs) return `${Math.round(next - now)} ms ahead (at most ${maxAheadMs}): ${next}`;
  return undefined;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

/** A send waiting for slots. */
export interface WaitingSend {
  readonly lane: LaneId;
  readonly recipients: number;
  /** Epoch ms: past it, a send still without a due slot gives up. */
  readonly deadline: number;
}

/** What a container knows when it looks: the input of {@link step}. */
export interface PacerState<W extends WaitingSend = WaitingSend> {
  readonly now: number;
  /** The lanes' rates ({@link laneRates}): every lane there is. */
  readonly rates: Readonly<Partial<Record<LaneId, number>>>;
  /** {@link slotLagMs} */
  readonly lagMs: number;
  /** Leased slot times not yet given to a send, ascending. */
  readonly pool: readonly number[];
  /** Sends waiting for slots, each lane's in arrival order. */
  readonly waiting: Readonly<Partial<Record<LaneId, readonly W[]>>>;
  /** No send goes before this (a throttle). */
  readonly pausedUntil: number;
  /** Sends pace to the static share until this (a store failure, an implausible item). */
  readonly fallbackUntil: number;
  /** A lane's item is taken up to here (as a lease or borrow last found it; absent: not known). */
  readonly busyUntil: Readonly<Partial<Record<LaneId, number>>>;
  /** A lease for the lane's sends is on its way. */
  readonly leasing: Readonly<Partial<Record<LaneId, boolean>>>;
  /** A borrow is on its way (one at a time, for any lane). */
  readonly borrowing: boolean;
}

/** A lease to start: `count` slots of `item`'s lane for `lane`'s sends. */
export interface SlotRequest {
  /** `lease`: the lane's own slots (the normal lane's when its share is 0); `borrow`: another lane's idle ones. */
  readonly kind: 'lease' | 'borrow';
  /** The lane whose sends the slots are for. */
  readonly lane: LaneId;
  /** The lane whose item the slots are taken from. */
  readonly item: LaneId;
  /**
   * A borrow from the lane's sibling (lane-rates.ts `siblingOf`): it holds the item, so that other
   * lanes may not borrow it while this one keeps borrowing (a team's idle reserve is the team's).
   */
  readonly holds?: boolean;
  readonly count: number;
  /** Milliseconds between two slots of `item`. */
  readonly intervalMs: number;
  /** The latest `next` the lease may start from. */
  readonly latestStart: number;
  /** {@link maxLeaseAheadMs} for the item's interval: beyond it, a value read is implausible. */
  readonly maxAheadMs: number;
}

/** What {@link step} decides. */
export type Decision<W extends WaitingSend = WaitingSend> =
  /** Every waiting send paces to the static share (they leave the pacer's lanes). */
  | { readonly kind: 'static'; readonly lookAgainAt: number }
  | {
      readonly kind: 'slots';
      /** The pool after the stale slots are dropped and the due sends took theirs. */
      readonly pool: number[];
      /** Sends whose deadline passed with no due slot: they give up, nothing taken. */
      readonly expired: W[];
      /** Sends that go now, in order, on the pool's earliest slots. */
      readonly due: W[];
      /** Leases and borrows to start, in order. */
      readonly requests: SlotRequest[];
      /** When a send waiting on slots it holds becomes due (Infinity: none does). */
      readonly lookAgainAt: number;
    };

/** Every lane of the state: the high-priority lanes first (`high` the first), then the others; each in the rates' order. */
function lanesOf(s: PacerState): LaneId[] {
  const lanes = ['high', ...(Object.keys(s.rates) as LaneId[]).filter((lane) => lane !== 'high')] as LaneId[];
  return [...lanes.filter((lane) => kindOf(lane) === 'high'), ...lanes.filter((lane) => kindOf(lane) !== 'high')];
}

const rateOf = (s: PacerState, lane: LaneId): number => s.rates[lane] ?? 0;
const busyOf = (s: PacerState, lane: LaneId): number => s.busyUntil[lane] ?? 0;

/**
 * The lane whose item `lane`'s sends lease from: its own; its sibling's for a lane without a rate
 * (a high-priority share of 0), else the normal lane's; none when none has one (its sends borrow
 * idle slots only).
 */
function homeOf(s: PacerState, lane: LaneId): LaneId | undefined {
  return [lane, siblingOf(lane), 'normal' as const].find((home) => rateOf(s, home) > 0);
}

/**
 * The lane `lane` borrows from: one with a rate, not known to be taken beyond now; its sibling
 * first, then the one known idle the longest (an item not yet looked at first), so that a busy one
 * found by a failed borrow is not asked again before it may be idle.
 */
function idleLane(s: PacerState, lane: LaneId): LaneId | undefined {
  const free = (other: LaneId) => other !== lane && rateOf(s, other) > 0 && s.now >= busyOf(s, other);
  if (free(siblingOf(lane))) return siblingOf(lane);
  let idle: LaneId | undefined;
  for (const other of lanesOf(s)) {
    if (!free(other)) continue;
    if (idle === undefined || busyOf(s, other) < busyOf(s, idle)) idle = other;
  }
  return idle;
}

/** What a lane may borrow for `wanted` recipients, or undefined when it may not. */
function borrowRequest(s: PacerState, lane: LaneId, wanted: number, leasing: boolean, borrowing: boolean) {
  // One borrow at a time; not while the lane's own lease is on its way; only from an idle lane.
  if (borrowing || leasing) return undefined;
  const other = idleLane(s, lane);
  if (other === undefined) return undefined;
  const intervalMs = 1000 / rateOf(s, other);
  const count = Math.max(1, Math.min(wanted, Math.floor(BORROW_PERIOD_MS / intervalMs)));
  const request: SlotRequest = {
    kind: 'borrow',
    lane,
    item: other,
    ...(other === siblingOf(lane) ? { holds: true } : {}),
    count,
    intervalMs,
    latestStart: s.now,
    maxAheadMs: maxLeaseAheadMs(intervalMs),
  };
  return request;
}

/** What a lane may lease for `count` recipients of its `waiting` sends, or undefined when it may not. */
function leaseRequest(s: PacerState, lane: LaneId, count: number, waiting: readonly WaitingSend[], leasing: boolean) {
  const item = homeOf(s, lane);
  if (item === undefined || leasing || count <= 0 || waiting.length === 0) return undefined;
  const deadline = Math.min(s.now + MAX_LEASE_DEADLINE_MS, ...waiting.map((w) => w.deadline));
  const intervalMs = 1000 / rateOf(s, item);
  // No more than the lane can give before the deadline: a slow lane (a small share) leases for the
  // first sends, and the rest wait for the next lease or give up, rather than none ever leasing.
  const fits = Math.floor((deadline - s.now) / intervalMs);
  const wanted = Math.max(1, Math.min(MAX_LEASE, count, fits));
  // Never further ahead than the deadline allows, nor than LEASE_HORIZON_MS. The lane is leased
  // beyond that: wait until it is not (or the sends' deadline passes).
  const latestStart = Math.min(deadline - wanted * intervalMs, s.now + LEASE_HORIZON_MS);
  if (busyOf(s, item) > latestStart) return undefined;
  const request: SlotRequest = {
    kind: 'lease',
    lane,
    item,
    count: wanted,
    intervalMs,
    latestStart,
    maxAheadMs: maxLeaseAheadMs(intervalMs),
  };
  return request;
}

/**
 * One look: which sends go, which give up, what to lease or borrow, when to look again. Sends take
 * the pool's slots in order, high-priority sends first; a send of n recipients takes n slots and goes
 * at the last (SES counts recipients on arrival), once that is due and no throttle pauses the
 * container. Slots older than the lag are dropped. Then four rules, in this order:
 * 1. sends without slots borrow an idle lane's slots (nothing leased beyond now; their sibling's
 *    first, holding it) for at most BORROW_PERIOD_MS ahead, or, when they cannot and no borrow is on
 *    its way, lease their own lane's;
 * 2. high-priority sends whose slots are all further off than BORROW_THRESHOLD_MS (slots leased for
 *    bulk mail) lease their own lane's as well;
 * 3. sends whose own slots are all further off than FAR_SLOT_MS borrow an idle lane's too,
 *    while the container holds no slots beyond what its sends wait for (this rule was removed in
 *    df5b13d and brought back in 060ed74: without it, one or two containers at 10/s used 0.84 of the
 *    rate, every container's sends holding slots while the high lane's reserve idled);
 * 4. a lease starts at most LEASE_HORIZON_MS ahead, and never on a lane taken beyond that.
 */
export function step<W extends WaitingSend>(s: PacerState<W>): Decision<W> {
  const t = s.now;
  if (t < s.fallbackUntil) return { kind: 'static', lookAgainAt: t + POLL_MS };
  const lanes = lanesOf(s);
  const pool = s.pool.filter((slot) => slot >= t - s.lagMs);
  let wakeAt = Infinity;
  let index = 0;
  const unfunded: Partial<Record<LaneId, number>> = {};
  const due: W[] = [];
  const expired: W[] = [];
  /** When each lane's last send waiting would go (Infinity: one has no slots yet). */
  const lastAt: Partial<Record<LaneId, number>> = {};
  for (const waiting of lanes.flatMap((lane) => s.waiting[lane] ?? [])) {
    const funded = index + waiting.recipients <= pool.length;
    const last = funded ? pool[index + waiting.recipients - 1]! : Infinity;
    const isDue = last <= t && t >= s.pausedUntil;
    // A send whose slot is due goes even past its deadline (the SES timeout's margin covers it), as
    // the static bucket sends at once when it holds tokens; one still waiting past it gives up.
    if (!isDue && waiting.deadline < t) {
      expired.push(waiting);
      continue;
    }
    if (funded) {
      if (isDue) due.push(waiting);
      else {
        wakeAt = Math.min(wakeAt, Math.max(last, s.pausedUntil));
        lastAt[waiting.lane] = Math.max(lastAt[waiting.lane] ?? -Infinity, last);
      }
      index += waiting.recipients;
    } else {
      lastAt[waiting.lane] = Infinity;
      unfunded[waiting.lane] =
        (unfunded[waiting.lane] ?? 0) + index + waiting.recipients - Math.max(index, pool.length);
      index = Math.max(index, pool.length) + waiting.recipients;
    }
  }
  // Due sends take the earliest slots, from the front of the ordered pool in turn.
  const rest = pool.slice(due.reduce((sum, waiting) => sum + waiting.recipients, 0));
  const gone = new Set<W>([...expired, ...due]);
  const remaining = (lane: LaneId): W[] => (s.waiting[lane] ?? []).filter((w) => !gone.has(w));
  const leasing: Partial<Record<LaneId, boolean>> = { ...s.leasing };
  let borrowing = s.borrowing;
  const requests: SlotRequest[] = [];
  const borrow = (lane: LaneId, wanted: number): boolean => {
    const request = borrowRequest(s, lane, wanted, leasing[lane] === true, borrowing);
    if (request === undefined) return false;
    borrowing = true;
    requests.push(request);
    return true;
  };
  const lease = (lane: LaneId, count: number): void => {
    const request = leaseRequest(s, lane, count, remaining(lane), leasing[lane] === true);
    if (request === undefined) return;
    leasing[lane] = true;
    requests.push(request);
  };
  // 1. Sends without slots take an idle lane's first, then their own lane's.
  for (const lane of lanes) {
    const wanted = unfunded[lane] ?? 0;
    if (wanted <= 0) continue;
    if (!borrow(lane, wanted) && !borrowing) lease(lane, wanted);
  }
  // 2. High-priority sends given slots leased for bulk mail far off lease their own lane's instead.
  const highLanes = lanes.filter((lane) => kindOf(lane) === 'high');
  for (const lane of highLanes) {
    if ((unfunded[lane] ?? 0) === 0 && (lastAt[lane] ?? -Infinity) > t + BORROW_THRESHOLD_MS) {
      lease(lane, remaining(lane).length);
    }
  }
  // 3. Sends whose own slots are all further off than FAR_SLOT_MS borrow too: otherwise the idle
  // lanes' slots go unused while every container's sends hold slots (one or two containers, low rates).
  // The slots a borrow frees are taken by the container's next sends (leases skip them). Not while
  // the container holds slots no send waits for (a borrow's leftovers).
  for (const lane of [...lanes.filter((lane) => kindOf(lane) !== 'high'), ...highLanes]) {
    const waiting = remaining(lane).length;
    const far = (unfunded[lane] ?? 0) === 0 && (lastAt[lane] ?? -Infinity) > t + FAR_SLOT_MS;
    if (waiting > 0 && far && rest.length <= index) borrow(lane, waiting);
  }
  return { kind: 'slots', pool: rest, expired, due, requests, lookAgainAt: wakeAt };
}

/** How long the scheduler sleeps before its next look: until `lookAgainAt`, at most POLL_MS, at least 1 ms. */
export function sleepMs(lookAgainAt: number, now: number): number {
  return Math.max(1, Math.min(POLL_MS, lookAgainAt - now));
}

/** How a send asks for slots: the static share (during a fallback), or a wait of at least MIN_WAIT_MS. */
export function admission(
  now: number,
  recipients: number,
  deadline: number,
  fallbackUntil: number,
): { readonly kind: 'static' | 'wait'; readonly recipients: number; readonly deadline: number } {
  const n = Math.max(1, recipients);
  if (now < fallbackUntil) return { kind: 'static', recipients: n, deadline };
  return { kind: 'wait', recipients: n, deadline: Math.max(deadline, now + MIN_WAIT_MS) };
}

/** Until when a throttle at `now` (another sender on the account) pauses this container's sends. */
export function pausedAfterThrottle(now: number): number {
  return now + THROTTLE_PAUSE_MS;
}

/** Until when a container keeps to its static share after the store failed at `now`. */
export function fallbackAfterStoreFailure(now: number): number {
  return now + FALLBACK_MS;
}
