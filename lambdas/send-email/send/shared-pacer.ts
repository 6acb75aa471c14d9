/**
 * The container's side of the shared rate lease (rate-lease.ts): its sends wait for slots leased
 * from the lanes' items, so that all containers together keep to 95 % of maxSendRate and use it
 * whether one of them runs or maxConcurrency. The rate is split in two lanes: `high` has
 * highPriorityRateShare percent of it, `normal` the rest; sends without slots first borrow the
 * other lane's slots while that lane is idle (nothing leased beyond now), so bulk mail uses the
 * reserve only while no high-priority mail waits, and for at most BORROW_PERIOD_MS ahead; sends
 * whose own slots are further off than FAR_SLOT_MS borrow as well. A lane is leased at most
 * LEASE_HORIZON_MS ahead: sends wait without slots rather than holding them seconds ahead, so that
 * few slots are left unused behind a container that gets no more work (with ten containers holding
 * slots seconds ahead, the end of a burst ran at half the rate).
 *
 * A send of n recipients waits for n slots and goes at the last (SES counts recipients on arrival).
 * Slots may lie up to the lag in the past (a gap between two batches is not lost), never more, so
 * a burst stays within what SES's one second of burst allows. Leased slots no send took are kept for
 * the container's next sends until they are stale. A throttle (another sender on the account)
 * pauses this container's sends for a second. When the table cannot be reached, the container falls
 * back to its static share (pacing.ts) for FALLBACK_MS, so the rate is never exceeded then either.
 * A lane item no lease could have written (see rate-lease.ts) is repaired by the lease that finds
 * it; until one is, the container paces to its static share (for IMPLAUSIBLE_FALLBACK_MS at a
 * time), so one bad item never stops sending.
 */
import type { Lane } from '../../kernel/names';
import { PACING_HEADROOM, type Pacer, type SendPacer } from './pacing';
import { leaseSlots, type SlotStore } from './rate-lease';

/** How far ahead a lane borrows the other's idle slots: the longest a high-priority send waits for them. */
export const BORROW_PERIOD_MS = 800;
/** High-priority sends whose slots (leased for bulk mail) are further off than this lease their own. */
const BORROW_THRESHOLD_MS = 100;
/**
 * Sends holding slots of their own lane further off than this also borrow the other lane's idle
 * ones. The lease horizon keeps their own slots near, so the ones a borrow frees are soon taken
 * by the container's next sends, and few are left unused when a burst ends.
 */
const FAR_SLOT_MS = 300;
/** How long a container keeps to its static share after the table failed. */
export const FALLBACK_MS = 30_000;
/** How long a throttle pauses this container's sends. */
const THROTTLE_PAUSE_MS = 1000;
/** The longest the scheduler sleeps without looking at new sends. */
const POLL_MS = 25;
/** How long a send may always wait for its slot, whatever its deadline says. */
const MIN_WAIT_MS = 250;
/**
 * How far ahead a lease may start: the line of slots leased and not yet used stays about this
 * long (plus one lease), so sends wait unfunded rather than holding slots seconds ahead. Then the
 * other lane's idle slots go to sends that have none, and a container that stops getting work
 * leaves few slots unused behind it (each a gap in the rate when a burst ends).
 */
export const LEASE_HORIZON_MS = 1000;
/** Most slots one lease asks for. */
const MAX_LEASE = 100;
/** How far the clocks of two containers may differ (Lambda's are kept by NTP, well within this). */
const CLOCK_SKEW_MS = 5000;
/** How long a container keeps to its static share after finding an implausible item it could not repair. */
export const IMPLAUSIBLE_FALLBACK_MS = 5000;

/**
 * The furthest ahead of now a lease leaves a lane's `next`, on a lane of slots `intervalMs` apart:
 * a lease starts at most LEASE_HORIZON_MS ahead and spans at most MAX_LEASE slots, and the
 * container that wrote it may run CLOCK_SKEW_MS ahead. Anything beyond is no lease's.
 */
export function maxLeaseAheadMs(intervalMs: number): number {
  return Math.ceil(LEASE_HORIZON_MS + MAX_LEASE * intervalMs + CLOCK_SKEW_MS);
}

/**
 * How far in the past a slot may still be used: a send at a stale slot joins the sends of the slots
 * after it, and SES allows a burst of one second of its rate. Two lanes and rounding take two
 * recipients of it, and 100 ms is left for requests that arrive bunched; at most 500 ms.
 */
export function slotLagMs(maxSendRate: number): number {
  const rate = maxSendRate * PACING_HEADROOM;
  return Math.max(0, Math.min(500, ((maxSendRate - 2) / rate) * 1000 - 100));
}

/** The lanes' rates (recipients per second): 95 % of maxSendRate, split by the high lane's share. */
export function laneRates(maxSendRate: number, highShare: number): Record<Lane, number> {
  const rate = maxSendRate * PACING_HEADROOM;
  const high = (rate * highShare) / 100;
  return { normal: rate - high, high };
}

export interface SharedPacerOptions {
  readonly store: SlotStore;
  readonly maxSendRate: number;
  /** Percent of the rate reserved for the high lane. */
  readonly highShare: number;
  /** The static share, used while the store cannot be reached. */
  readonly fallback: SendPacer;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Writes made to the store (for the RateLeaseWrites metric). */
  readonly onWrites?: (writes: number) => void;
  /** The store failed: the container paces to its static share for FALLBACK_MS. */
  readonly onFallback?: (error: unknown) => void;
  /**
   * A lease found a lane's item implausible (`found` says how): `repaired` when its write replaced
   * it. Unrepaired with no slots, the container paces to its static share for IMPLAUSIBLE_FALLBACK_MS.
   */
  readonly onImplausible?: (lane: Lane, found: string, repaired: boolean) => void;
}

interface Waiting {
  readonly lane: Lane;
  readonly recipients: number;
  readonly deadline: number;
  readonly resolve: (admitted: boolean) => void;
}

const OTHER: Record<Lane, Lane> = { normal: 'high', high: 'normal' };

export class SharedPacer {
  readonly #options: SharedPacerOptions;
  readonly #rates: Record<Lane, number>;
  readonly #lagMs: number;
  /** Leased slot times not yet given to a send, ascending. */
  #pool: number[] = [];
  /** Sends waiting for slots: high first, then normal, each in arrival order. */
  readonly #waiting: Record<Lane, Waiting[]> = { normal: [], high: [] };
  readonly #leasing: Record<Lane, boolean> = { normal: false, high: false };
  /** A lane's item is taken up to here (from a lease or borrow that found it so). */
  readonly #busyUntil: Record<Lane, number> = { normal: 0, high: 0 };
  #borrowing = false;
  #running = false;
  #pausedUntil = 0;
  #fallbackUntil = 0;
  /** Recipients given slots, by lane, since the last {@link takePaced}. */
  readonly #paced: Record<Lane, number> = { normal: 0, high: 0 };

  constructor(options: SharedPacerOptions) {
    this.#options = options;
    this.#rates = laneRates(options.maxSendRate, options.highShare);
    this.#lagMs = slotLagMs(options.maxSendRate);
  }

  /** The pacer a lane's sends use. */
  lane(lane: Lane): Pacer {
    return {
      acquire: (recipients, deadline) => this.acquire(lane, recipients, deadline),
      onThrottle: () => this.onThrottle(),
    };
  }

  /** Recipients paced per lane since the last call (the RecipientsPaced metric), and resets them. */
  takePaced(): Record<Lane, number> {
    const paced = { ...this.#paced };
    this.#paced.normal = 0;
    this.#paced.high = 0;
    return paced;
  }

  /** Waits for `recipients` slots of `lane`; false, with none taken, when none come before `deadline`. */
  acquire(lane: Lane, recipients: number, deadline: number): Promise<boolean> {
    const n = Math.max(1, recipients);
    const now = this.#options.now();
    if (now < this.#fallbackUntil) return this.#static(lane, n, deadline);
    // A lease takes a round trip and the next slot: a send may always wait that long, as one from
    // the static bucket never waits when it holds tokens (an invocation short of time still sends).
    const latest = Math.max(deadline, now + MIN_WAIT_MS);
    return new Promise<boolean>((resolve) => {
      this.#waiting[lane].push({ lane, recipients: n, deadline: latest, resolve });
      void this.#run();
    });
  }

  /** SES throttled a send despite the lease: this container sends nothing for a second. */
  onThrottle(): void {
    this.#pausedUntil = this.#options.now() + THROTTLE_PAUSE_MS;
    this.#options.fallback.onThrottle();
  }

  async #static(lane: Lane, recipients: number, deadline: number): Promise<boolean> {
    const admitted = await this.#options.fallback.acquire(recipients, deadline);
    if (admitted) this.#paced[lane] += recipients;
    return admitted;
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (;;) {
        const wakeAt = this.#step();
        if (this.#waiting.high.length + this.#waiting.normal.length === 0) return;
        const t = this.#options.now();
        await this.#options.sleep(Math.max(1, Math.min(POLL_MS, wakeAt - t)));
      }
    } finally {
      this.#running = false;
    }
  }

  /** One look: sends whose slots are due go, demand without slots is leased; returns when to look again. */
  #step(): number {
    const t = this.#options.now();
    if (t < this.#fallbackUntil) {
      this.#toStatic();
      return t + POLL_MS;
    }
    this.#pool = this.#pool.filter((slot) => slot >= t - this.#lagMs);
    let wakeAt = Infinity;
    let index = 0;
    const unfunded: Record<Lane, number> = { normal: 0, high: 0 };
    const due: Waiting[] = [];
    /** When each lane's last send waiting would go (Infinity: one has no slots yet). */
    const lastAt: Record<Lane, number> = { normal: -Infinity, high: -Infinity };
    const ordered = [...this.#waiting.high, ...this.#waiting.normal];
    for (const waiting of ordered) {
      const funded = index + waiting.recipients <= this.#pool.length;
      const last = funded ? this.#pool[index + waiting.recipients - 1]! : Infinity;
      const isDue = last <= t && t >= this.#pausedUntil;
      // A send whose slot is due goes even past its deadline (the SES timeout's margin covers it), as
      // the static bucket sends at once when it holds tokens; one still waiting past it gives up.
      if (!isDue && waiting.deadline < t) {
        this.#remove(waiting);
        waiting.resolve(false);
        continue;
      }
      if (funded) {
        if (isDue) due.push(waiting);
        else {
          wakeAt = Math.min(wakeAt, Math.max(last, this.#pausedUntil));
          lastAt[waiting.lane] = Math.max(lastAt[waiting.lane], last);
        }
        index += waiting.recipients;
      } else {
        lastAt[waiting.lane] = Infinity;
        unfunded[waiting.lane] += index + waiting.recipients - Math.max(index, this.#pool.length);
        index = Math.max(index, this.#pool.length) + waiting.recipients;
      }
    }
    // Due sends take the earliest slots; the pool is ordered, so take them from the front in turn.
    for (const waiting of due) {
      this.#pool.splice(0, waiting.recipients);
      this.#remove(waiting);
      this.#paced[waiting.lane] += waiting.recipients;
      waiting.resolve(true);
    }
    for (const lane of ['high', 'normal'] as const) {
      if (unfunded[lane] <= 0) continue;
      // Sends without slots take the other lane's idle ones first, then their own lane's.
      if (!this.#borrow(lane, unfunded[lane], t) && !this.#borrowing) this.#lease(lane, unfunded[lane], t);
    }
    // High-priority sends given slots leased for bulk mail far off lease their own lane's instead.
    if (unfunded.high === 0 && lastAt.high > t + BORROW_THRESHOLD_MS) this.#lease('high', this.#waiting.high.length, t);
    // Sends whose own slots are all further off than FAR_SLOT_MS borrow too: otherwise the other lane's
    // idle slots go unused while every container's sends hold slots (one or two containers, low rates).
    // The slots a borrow frees are taken by the container's next sends (leases skip them).
    for (const lane of ['normal', 'high'] as const) {
      if (
        unfunded[lane] === 0 &&
        this.#waiting[lane].length > 0 &&
        lastAt[lane] > t + FAR_SLOT_MS &&
        // Nor while this container holds slots no send waits for (a borrow's leftovers).
        this.#pool.length <= index
      ) {
        this.#borrow(lane, this.#waiting[lane].length, t);
      }
    }
    return wakeAt;
  }

  #remove(waiting: Waiting): void {
    const list = this.#waiting[waiting.lane];
    const at = list.indexOf(waiting);
    if (at >= 0) list.splice(at, 1);
  }

  /** Leases a lane's slots for its unfunded sends (one lease at a time per lane). */
  #lease(lane: Lane, count: number, t: number): void {
    // A lane without a reserve (a share of 0) takes its slots from the other lane's item.
    const itemLane = this.#rates[lane] > 0 ? lane : OTHER[lane];
    if (this.#leasing[lane] || count <= 0 || this.#waiting[lane].length === 0) return;
    // Never further ahead than a minute, whatever deadline a caller gives.
    const deadline = Math.min(t + 60_000, ...this.#waiting[lane].map((w) => w.deadline));
    const interval = 1000 / this.#rates[itemLane];
    const wanted = Math.min(MAX_LEASE, count);
    // The lane is leased beyond that: wait until it is not (or the sends' deadline passes).
    // Never further ahead than the deadline allows, nor than LEASE_HORIZON_MS.
    const latestStart = Math.min(deadline - wanted * interval, t + LEASE_HORIZON_MS);
    if (this.#busyUntil[itemLane] > latestStart) return;
    this.#leasing[lane] = true;
    void this.#write(
      leaseSlots(this.#options.store, {
        lane: itemLane,
        count: wanted,
        intervalMs: interval,
        now: t,
        lagMs: this.#lagMs,
        latestStart,
        maxAheadMs: maxLeaseAheadMs(interval),
      }),
      itemLane,
    ).finally(() => {
      this.#leasing[lane] = false;
    });
  }

  /**
   * Borrows slots of the other lane for `unfunded` sends of `lane`, if that lane is idle (nothing
   * leased beyond now): only slots from now to BORROW_PERIOD_MS ahead, so the other lane's next send
   * waits at most that. Only sends without slots borrow: a borrowed slot given to a send that had
   * one would leave that one unused, a hole in the line when a burst ends. False when it cannot.
   */
  #borrow(lane: Lane, unfunded: number, t: number): boolean {
    const other = OTHER[lane];
    if (this.#borrowing || this.#leasing[lane] || this.#rates[other] <= 0 || t < this.#busyUntil[other]) return false;
    const interval = 1000 / this.#rates[other];
    const count = Math.max(1, Math.min(unfunded, Math.floor(BORROW_PERIOD_MS / interval)));
    this.#borrowing = true;
    void this.#write(
      leaseSlots(this.#options.store, {
        lane: other,
        count,
        intervalMs: interval,
        now: t,
        lagMs: this.#lagMs,
        latestStart: t,
        maxAheadMs: maxLeaseAheadMs(interval),
      }),
      other,
    ).finally(() => {
      this.#borrowing = false;
    });
    return true;
  }

  async #write(lease: Promise<Awaited<ReturnType<typeof leaseSlots>>>, itemLane: Lane): Promise<void> {
    try {
      const result = await lease;
      this.#options.onWrites?.(result.writes);
      if (result.implausible !== undefined) {
        this.#options.onImplausible?.(itemLane, result.implausible, result.repaired === true);
        // Not repaired yet (it keeps coming back, or cannot be replaced): the static share meanwhile.
        if (result.slots.length === 0) this.#fallbackUntil = this.#options.now() + IMPLAUSIBLE_FALLBACK_MS;
      }
      const takenUntil = result.busyUntil ?? result.next;
      if (takenUntil !== undefined) this.#busyUntil[itemLane] = takenUntil;
      if (result.slots.length > 0) this.#pool = [...this.#pool, ...result.slots].sort((a, b) => a - b);
    } catch (error) {
      this.#fallbackUntil = this.#options.now() + FALLBACK_MS;
      this.#options.onFallback?.(error);
    }
  }

  /** The store failed: every waiting send paces to the static share instead. */
  #toStatic(): void {
    for (const lane of ['high', 'normal'] as const) {
      for (const waiting of this.#waiting[lane].splice(0)) {
        void this.#static(lane, waiting.recipients, waiting.deadline).then(waiting.resolve);
      }
    }
  }
}
