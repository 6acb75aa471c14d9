/**
 * The shared rate lease, the algorithm: send slots that every container of the pipeline takes from
 * one place, so that all of them together keep to maxSendRate however many run. Each lane (normal,
 * high, and each team's) is one item of the idempotency table (slot-store.ts), whose `next` is the time (epoch ms)
 * of the lane's next free slot; slots follow each other at the lane's interval (1000 / its rate).
 * A container leases n slots with one conditional UpdateItem, `ADD next n × interval` while `next`
 * is neither stale (older than the lag allowed) nor beyond what the waiting sends can use; a stale
 * or missing `next` starts again from now (SET, conditional too). Slots are handed out in order, so
 * the sends of all containers together are spaced evenly: no window boundary to burst at, and no
 * failed write while the lane is busy (an ADD never conflicts). Borrowing takes slots of another
 * lane only while it is idle (nothing leased beyond now), never its future ones, and only once its
 * own sends have leased nothing for a while (`ownerGraceMs` after the end of their last lease): the
 * pause between two batches of a lane whose mail is waiting is not idleness, so teams whose mail
 * is all waiting each keep their lane's share. A lane's sibling (a team's queue and its
 * high-priority mail) borrows it as its holder, which other lanes' borrows respect as they do the
 * owner, so a team keeps its own idle reserve.
 *
 * An item no lease could have written (a `next` further ahead than a lease reaches, below zero, or
 * not a number: written by hand, by a bug, by anyone the table lets write) would otherwise stop the
 * lane: every ADD fails its condition and no restart replaces a value in the future. A lease that
 * finds one replaces it at once, with a write conditioned on the very value it read (so a repair
 * never undoes another container's lease), and says so. {@link afterLease} says how a lease's
 * answer changes the pacer's state.
 */
import type { LaneId } from './lane-rates';
import { IMPLAUSIBLE_FALLBACK_MS, implausibility } from './pacing-policy';
import type { SlotStore } from './slot-store';

/** What a lease asks for. */
export interface LeaseRequest {
  readonly lane: LaneId;
  readonly count: number;
  /** Milliseconds between two slots of this lane. */
  readonly intervalMs: number;
  readonly now: number;
  /** How far back a slot may lie and still be sent (pacing-policy.ts's slotLagMs). */
  readonly lagMs: number;
  /** The latest `next` the lease may start from: the waiting sends' deadline, or now when borrowing. */
  readonly latestStart: number;
  /**
   * The furthest beyond `now` a lane's `next` can be when leases wrote it (the lease horizon, the
   * longest lease, and the clock differences between containers). Further, below zero, or not a
   * number: the item is implausible, and repaired.
   */
  readonly maxAheadMs: number;
  /**
   * Set for a borrow (another lane's sends): the lane's own sends must have leased nothing ending
   * later than this long ago. @default none: the lane's own lease
   */
  readonly ownerGraceMs?: number;
  /**
   * A borrow by the lane's sibling (lane-rates.ts `siblingOf`), with `ownerGraceMs`: the borrowing
   * lane. It may also write while it holds the item, and holds it: other lanes' borrows wait the
   * grace after it, as after the owner's lease. @default none: a borrow that leaves the item as it is
   */
  readonly holder?: LaneId;
}

/** Slot times (epoch ms, ascending), or the lane's `next` when no slot could be had by `latestStart`. */
export interface LeaseResult {
  readonly slots: readonly number[];
  /** The lane is taken up to here (it was beyond latestStart). */
  readonly busyUntil?: number;
  /** The lane's `next` after a lease that got slots: taken up to here now. */
  readonly next?: number;
  /** Writes made, failed ones included: each costs a write unit. */
  readonly writes: number;
  /** The lane's item held a value no lease writes (described here): see {@link repaired}. */
  readonly implausible?: string;
  /** This lease replaced that value (false: another container did first, or it could not be replaced). */
  readonly repaired?: boolean;
}

/** Leases `count` slots of a lane: one write when the lane is busy or recently used, two after a pause. */
export async function leaseSlots(store: SlotStore, request: LeaseRequest): Promise<LeaseResult> {
  const { lane, count, intervalMs, now, lagMs } = request;
  // Whole milliseconds in the store; the slots are spread evenly over the span.
  const span = Math.max(1, Math.round(count * intervalMs));
  const step = span / count;
  const lower = now - lagMs;
  const upper = Math.max(lower, request.latestStart);
  const grace = request.ownerGraceMs;
  const idleBefore = grace === undefined ? undefined : now - grace;
  let writes = 0;
  let found: Pick<LeaseResult, 'implausible' | 'repaired'> = {};
  // A few rounds: another container may restart the lane between the two writes.
  for (let round = 0; round < 3; round += 1) {
    writes += 1;
    const advanced = await store.advance(lane, span, lower, upper, idleBefore, request.holder);
    if (advanced.ok) {
      return { slots: slotTimes(advanced.next - span, count, step), next: advanced.next, writes, ...found };
    }
    const implausible = implausibility(advanced, now, request.maxAheadMs);
    if (implausible !== undefined) {
      // Replace exactly what was read: if another container repaired it first, this write fails.
      writes += 1;
      const repaired = await store.repair(lane, advanced.found ?? advanced.next, Math.round(now) + span);
      found = { implausible, repaired: repaired.ok };
      if (repaired.ok) {
        return { slots: slotTimes(Math.round(now), count, step), next: Math.round(now) + span, writes, ...found };
      }
      continue;
    }
    // A borrow from a lane whose own sends leased lately: taken until the grace after their lease.
    const ownerAt = advanced.owner;
    const held = request.holder !== undefined && advanced.holder === request.holder;
    if (grace !== undefined && idleBefore !== undefined && ownerAt !== undefined && ownerAt >= idleBefore && !held) {
      return { slots: [], busyUntil: Math.max(advanced.next ?? 0, ownerAt + grace), writes, ...found };
    }
    if (advanced.next !== undefined && advanced.next > upper) {
      return { slots: [], busyUntil: advanced.next, writes, ...found };
    }
    if (advanced.next === undefined || advanced.next < lower) {
      writes += 1;
      const restarted = await store.restart(lane, Math.round(now) + span, lower, idleBefore, request.holder);
      if (restarted.ok) {
        return { slots: slotTimes(Math.round(now), count, step), next: Math.round(now) + span, writes, ...found };
      }
    }
  }
  return { slots: [], writes, ...found };
}

function slotTimes(first: number, count: number, intervalMs: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i * intervalMs);
}

/** What a lease answered ({@link LeaseResult}, as far as the pacer's state reads it). */
export interface LeaseAnswer {
  readonly slots: readonly number[];
  readonly busyUntil?: number;
  readonly next?: number;
  readonly implausible?: string;
  readonly repaired?: boolean;
}

/** How a lease's answer changes the state: each field set is the new value. */
export interface AfterLease {
  /** The pool with the lease's slots added, in order. */
  readonly pool: number[];
  /** How far the item's lane is taken now. */
  readonly busyUntil?: number;
  /** An implausible item is not repaired yet (no slots): the static share until this. */
  readonly fallbackUntil?: number;
}

/** The state after a lease of `answer`, taken into a pool of `pool` at `now`. */
export function afterLease(pool: readonly number[], answer: LeaseAnswer, now: number): AfterLease {
  // Not repaired yet (it keeps coming back, or cannot be replaced): the static share meanwhile.
  const fallbackUntil =
    answer.implausible !== undefined && answer.slots.length === 0 ? now + IMPLAUSIBLE_FALLBACK_MS : undefined;
  return {
    pool: answer.slots.length > 0 ? [...pool, ...answer.slots].sort((a, b) => a - b) : [...pool],
    busyUntil: answer.busyUntil ?? answer.next,
    fallbackUntil,
  };
}
