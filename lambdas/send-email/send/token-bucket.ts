/**
 * The static share: a token bucket per container, one token per recipient (SES's sending rate counts
 * recipients). Every container gets an equal share of the pipeline's rate,
 * maxSendRate / maxConcurrency, so all of them together stay under it however many run. The shared
 * lease (shared-pacer.ts) uses the whole rate instead, and falls back to this when it cannot.
 * A throttle despite pacing (another sender on the account, a lower quota than configured)
 * halves this container's rate; it grows back by a tenth of the share per second without one.
 *
 * A record waits for its tokens inside the invocation; one that cannot get them before the
 * deadline it is given is not sent at all (the caller retries it as "not sent").
 */
import type { HandlerSettings } from '../../kernel/environment';
import type { Pacer } from './pacer';
import { PACING_HEADROOM } from './lane-rates';

export interface PacerOptions {
  /** Recipients per second for this container. */
  readonly ratePerSecond: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The per-container share of a pipeline's rate. */
export function containerShare(maxSendRate: number, maxConcurrency: number): number {
  return (maxSendRate * PACING_HEADROOM) / Math.max(1, maxConcurrency);
}

export class SendPacer implements Pacer {
  /** The rate this container paces to now (lower than its share after a throttle). */
  private rate: number;
  private tokens: number;
  private updatedAt: number;
  private readonly share: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Waiters go in turn, so a large email cannot be starved by small ones. */
  private queue: Promise<unknown> = Promise.resolve();

  /** This container's pacer: its share of the pipeline's maxSendRate (see {@link containerShare}). */
  static forSettings(
    settings: Pick<HandlerSettings, 'maxSendRate' | 'maxConcurrency'>,
    clock: Pick<PacerOptions, 'now' | 'sleep'> = {},
  ): SendPacer {
    return new SendPacer({
      ratePerSecond: containerShare(settings.maxSendRate, settings.maxConcurrency),
      now: clock.now,
      sleep: clock.sleep,
    });
  }

  constructor(options: PacerOptions) {
    if (!(options.ratePerSecond > 0)) throw new Error(`ratePerSecond must be positive, got ${options.ratePerSecond}`);
    this.share = options.ratePerSecond;
    this.rate = this.share;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    // Start with one token (or one second's worth below one a second): no burst above the rate.
    this.tokens = this.capacity();
    this.updatedAt = this.now();
  }

  /** Most tokens the bucket holds: one second of the rate, at least one recipient. */
  private capacity(): number {
    return Math.max(1, this.rate);
  }

  private refill(): void {
    const now = this.now();
    const elapsed = Math.max(0, now - this.updatedAt) / 1000;
    this.updatedAt = now;
    if (this.rate < this.share) this.rate = Math.min(this.share, this.rate + elapsed * (this.share / 10));
    this.tokens = Math.min(this.capacity(), this.tokens + elapsed * this.rate);
  }

  /** The rate now, for logs and tests. */
  currentRate(): number {
    this.refill();
    return this.rate;
  }

  /**
   * Waits for `recipients` tokens. False, with nothing taken, when they would not be there
   * before `deadline` (epoch ms). An email with more recipients than the bucket holds waits
   * for a full bucket and leaves it in debt, so the rate still holds over time.
   */
  acquire(recipients: number, deadline: number): Promise<boolean> {
    const turn = this.queue.then(() => this.take(Math.max(1, recipients), deadline));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async take(recipients: number, deadline: number): Promise<boolean> {
    for (;;) {
      this.refill();
      const needed = Math.min(recipients, this.capacity());
      if (this.tokens >= needed) {
        this.tokens -= recipients;
        return true;
      }
      const waitMs = Math.ceil(((needed - this.tokens) / this.rate) * 1000);
      if (this.now() + waitMs > deadline) return false;
      await this.sleep(Math.max(1, waitMs));
    }
  }

  /** SES throttled a send despite the pacing: halve the rate and empty the bucket. */
  onThrottle(): void {
    this.refill();
    this.rate = Math.max(this.share / 16, this.rate / 2);
    this.tokens = Math.min(this.tokens, 0);
  }
}
