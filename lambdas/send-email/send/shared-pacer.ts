/**
 * The shared pacer: every container's sends wait for send slots leased from one item per lane on the
 * idempotency table, so that all containers together keep to 95 % of maxSendRate however many run.
 * The rate is split in lanes: each team its share (`team:<name>`, and `high:<name>` holding
 * highPriorityRateShare percent of it as the reserve of a team that may send high-priority mail),
 * and what the shares leave `high` (the reserve, the same percent of it) and `normal` (the work
 * queue). A lane borrows another's slots while that one is idle, its sibling's first (a team's
 * reserve for its bulk mail, and back), so bulk mail uses the reserve only while no high-priority
 * mail waits, and a team with mail waiting gets at least its share while using what idle teams
 * leave. A send of n recipients waits for n slots and
 * goes at the last; slots are leased at most a second ahead, may be used up to the lag late, and a
 * throttle pauses the container for a second. When the table cannot be reached the container paces
 * to its static share (token-bucket.ts) for 30 s, and a lane item no lease could have written is
 * repaired by the lease that finds it, the static share standing in until one is. The policy
 * (pacing-policy.ts) decides all of this from the state; this driver holds the state, sleeps, runs the
 * leases (rate-lease.ts over slot-store.ts) and reports their writes, fallbacks and repairs.
 */
import type { Lane } from '../../kernel/names';
import { kindOf, laneRates, teamHighLane, type LaneId } from './lane-rates';
import type { Pacer } from './pacer';
import {
  admission,
  fallbackAfterStoreFailure,
  OWNER_GRACE_MS,
  pausedAfterThrottle,
  sleepMs,
  slotLagMs,
  step,
  type SlotRequest,
  type WaitingSend,
} from './pacing-policy';
import { afterLease, leaseSlots } from './rate-lease';
import type { SlotStore } from './slot-store';

export interface SharedPacerOptions {
  readonly store: SlotStore;
  readonly maxSendRate: number;
  /** Percent of the rate reserved for the high lane. */
  readonly highShare: number;
  /**
   * Each team's share (percent) of the rate, by team name: a lane each (two with `highTeams`).
   * @default none: the work queue's normal lane takes it all
   */
  readonly teamShares?: Readonly<Record<string, number>>;
  /**
   * The teams of `teamShares` that may send high-priority mail: part of their share is their
   * high-priority lane (`high:<name>`). @default none
   */
  readonly highTeams?: readonly string[];
  /** The static share, used while the store cannot be reached. */
  readonly fallback: Pacer;
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
  readonly onImplausible?: (lane: LaneId, found: string, repaired: boolean) => void;
}

interface Waiting extends WaitingSend {
  readonly resolve: (admitted: boolean) => void;
}

export class SharedPacer {
  readonly #options: SharedPacerOptions;
  readonly #rates: Record<LaneId, number>;
  readonly #lagMs: number;
  /** Leased slot times not yet given to a send, ascending. */
  #pool: number[] = [];
  /** Sends waiting for slots, each lane's in arrival order. */
  readonly #waiting: Partial<Record<LaneId, Waiting[]>> = {};
  readonly #leasing: Partial<Record<LaneId, boolean>> = {};
  /** A lane's item is taken up to here (from a lease or borrow that found it so). */
  readonly #busyUntil: Partial<Record<LaneId, number>> = {};
  #borrowing = false;
  #running = false;
  #pausedUntil = 0;
  #fallbackUntil = 0;
  /** Recipients given slots, by lane, since the last {@link takePaced}. */
  readonly #paced: Record<Lane, number> = { normal: 0, high: 0 };

  constructor(options: SharedPacerOptions) {
    this.#options = options;
    this.#rates = laneRates(options.maxSendRate, options.highShare, options.teamShares, options.highTeams);
    this.#lagMs = slotLagMs(options.maxSendRate, Object.values(this.#rates).filter((rate) => rate > 0).length);
  }

  /**
   * The pacer a lane's sends use (a team without a lane of its own: the normal lane's). The high
   * lane's sends of a team with a high-priority lane of its own take that lane (`high:<name>`).
   */
  lane(lane: LaneId): Pacer {
    const known: LaneId = this.#rates[lane] === undefined ? 'normal' : lane;
    const ofTeam = (team: string | undefined): LaneId => {
      const own = team === undefined ? undefined : teamHighLane(team);
      return known === 'high' && own !== undefined && this.#rates[own] !== undefined ? own : known;
    };
    return {
      acquire: (recipients, deadline, team) => this.acquire(ofTeam(team), recipients, deadline),
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
  acquire(lane: LaneId, recipients: number, deadline: number): Promise<boolean> {
    const asked = admission(this.#options.now(), recipients, deadline, this.#fallbackUntil);
    if (asked.kind === 'static') return this.#static(lane, asked.recipients, asked.deadline);
    return new Promise<boolean>((resolve) => {
      (this.#waiting[lane] ??= []).push({ lane, recipients: asked.recipients, deadline: asked.deadline, resolve });
      void this.#run();
    });
  }

  /** SES throttled a send despite the lease: this container sends nothing for a while. */
  onThrottle(): void {
    this.#pausedUntil = pausedAfterThrottle(this.#options.now());
    this.#options.fallback.onThrottle();
  }

  async #static(lane: LaneId, recipients: number, deadline: number): Promise<boolean> {
    const admitted = await this.#options.fallback.acquire(recipients, deadline);
    if (admitted) this.#paced[kindOf(lane)] += recipients;
    return admitted;
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (;;) {
        const lookAgainAt = this.#step();
        if (!Object.values(this.#waiting).some((waiting) => waiting !== undefined && waiting.length > 0)) return;
        await this.#options.sleep(sleepMs(lookAgainAt, this.#options.now()));
      }
    } finally {
      this.#running = false;
    }
  }

  /** One look: asks the policy, and does what it says; returns when to look again. */
  #step(): number {
    const now = this.#options.now();
    const decision = step<Waiting>({
      now,
      rates: this.#rates,
      lagMs: this.#lagMs,
      pool: this.#pool,
      waiting: this.#waiting,
      pausedUntil: this.#pausedUntil,
      fallbackUntil: this.#fallbackUntil,
      busyUntil: this.#busyUntil,
      leasing: this.#leasing,
      borrowing: this.#borrowing,
    });
    if (decision.kind === 'static') {
      // Every waiting send paces to the static share instead, high-priority ones first.
      const lanes = Object.keys(this.#waiting).sort((a, b) => Number(b === 'high') - Number(a === 'high'));
      for (const lane of lanes as LaneId[]) {
        for (const waiting of this.#waiting[lane]?.splice(0) ?? []) {
          void this.#static(lane, waiting.recipients, waiting.deadline).then(waiting.resolve);
        }
      }
      return decision.lookAgainAt;
    }
    this.#pool = decision.pool;
    for (const waiting of decision.expired) {
      this.#remove(waiting);
      waiting.resolve(false);
    }
    for (const waiting of decision.due) {
      this.#remove(waiting);
      this.#paced[kindOf(waiting.lane)] += waiting.recipients;
      waiting.resolve(true);
    }
    for (const request of decision.requests) this.#start(request, now);
    return decision.lookAgainAt;
  }

  #remove(waiting: Waiting): void {
    const list = this.#waiting[waiting.lane] ?? [];
    const at = list.indexOf(waiting);
    if (at >= 0) list.splice(at, 1);
  }

  /** Starts a lease or borrow the policy asked for (one lease per lane, one borrow, at a time). */
  #start(request: SlotRequest, now: number): void {
    if (request.kind === 'borrow') this.#borrowing = true;
    else this.#leasing[request.lane] = true;
    const lease = leaseSlots(this.#options.store, {
      lane: request.item,
      count: request.count,
      intervalMs: request.intervalMs,
      now,
      lagMs: this.#lagMs,
      latestStart: request.latestStart,
      maxAheadMs: request.maxAheadMs,
      ...(request.kind === 'borrow' ? { ownerGraceMs: OWNER_GRACE_MS } : {}),
      ...(request.holds === true ? { holder: request.lane } : {}),
    });
    void this.#take(lease, request.item).finally(() => {
      if (request.kind === 'borrow') this.#borrowing = false;
      else this.#leasing[request.lane] = false;
    });
  }

  /** Takes a lease's answer into the state, or falls back to the static share when the store failed. */
  async #take(lease: ReturnType<typeof leaseSlots>, item: LaneId): Promise<void> {
    try {
      const result = await lease;
      this.#options.onWrites?.(result.writes);
      if (result.implausible !== undefined) {
        this.#options.onImplausible?.(item, result.implausible, result.repaired === true);
      }
      const after = afterLease(this.#pool, result, this.#options.now());
      if (after.fallbackUntil !== undefined) this.#fallbackUntil = after.fallbackUntil;
      if (after.busyUntil !== undefined) this.#busyUntil[item] = after.busyUntil;
      this.#pool = after.pool;
    } catch (error) {
      this.#fallbackUntil = fallbackAfterStoreFailure(this.#options.now());
      this.#options.onFallback?.(error);
    }
  }
}
