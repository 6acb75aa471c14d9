/**
 * The send stage's circuit breaker on SES, per container. A send that timed out, was reset or got a 5xx
 * (the ambiguous class) or a throttle opens it: for a cool-down no new send starts, then one
 * probe goes; its success closes the circuit, its failure opens it again with a cool-down twice
 * as long (up to a cap). Records that are not started are "not sent" for certain, so few
 * emails ever have an unknown fate when SES hangs.
 */
import type { HandlerSettings } from '../../kernel/environment';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** First cool-down, in ms. */
  readonly coolDownMs: number;
  /** Longest cool-down, in ms. */
  readonly maxCoolDownMs: number;
  readonly now?: () => number;
}

/** What a caller may do now. */
export type Permit =
  { readonly start: true; readonly probe: boolean } | { readonly start: false; readonly retryInMs: number };

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private openUntil = 0;
  private coolDownMs: number;
  private probing = false;
  private readonly now: () => number;

  /** The breaker of a container: its cool-down starts at the retry base and grows up to the retry cap. */
  static forSettings(
    settings: Pick<HandlerSettings, 'retryBaseSeconds' | 'retryCapSeconds'>,
    now?: () => number,
  ): CircuitBreaker {
    return new CircuitBreaker({
      coolDownMs: settings.retryBaseSeconds * 1000,
      maxCoolDownMs: Math.max(settings.retryBaseSeconds, settings.retryCapSeconds) * 1000,
      now,
    });
  }

  constructor(private readonly options: BreakerOptions) {
    this.coolDownMs = options.coolDownMs;
    this.now = options.now ?? Date.now;
  }

  /** The state now (an open circuit past its cool-down is half-open). */
  current(): BreakerState {
    if (this.state === 'open' && this.now() >= this.openUntil) this.state = 'half-open';
    return this.state;
  }

  /** Asks to start a send. In half-open state only one probe at a time is let through. */
  permit(): Permit {
    const state = this.current();
    if (state === 'closed') return { start: true, probe: false };
    if (state === 'half-open' && !this.probing) {
      this.probing = true;
      return { start: true, probe: true };
    }
    return { start: false, retryInMs: Math.max(0, this.openUntil - this.now()) };
  }

  /** SES answered (any answer that is not a failure of SES itself). */
  onSuccess(probe: boolean): void {
    if (probe) this.probing = false;
    if (probe || this.state === 'closed') {
      this.state = 'closed';
      this.coolDownMs = this.options.coolDownMs;
    }
  }

  /** A send timed out, was reset, got a 5xx or was throttled. */
  onFailure(probe: boolean): void {
    if (probe) {
      this.probing = false;
      this.coolDownMs = Math.min(this.options.maxCoolDownMs, this.coolDownMs * 2);
    }
    if (this.state !== 'open' || probe) {
      this.state = 'open';
      this.openUntil = this.now() + this.coolDownMs;
    }
  }

  /** A probe that ended without an answer either way (it was not sent): let another probe go. */
  onAbandoned(probe: boolean): void {
    if (probe) this.probing = false;
  }
}
