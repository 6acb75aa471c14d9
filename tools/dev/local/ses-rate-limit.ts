/**
 * SES's sending rate for the local stack. aws-ses-v2-local accepts any number of sends a
 * second; SES does not: beyond the account's maximum send rate, counted in recipients (To, Cc
 * and Bcc of each email), it answers HTTP 429 `TooManyRequestsException` ("Maximum sending
 * rate exceeded."). This layer sits in front of the SES emulator (or of another SES layer:
 * it forwards to any target) and does the same, with a token bucket that holds one second
 * of the rate, as SES allows short bursts up to it.
 *
 * `npm start` reads the rate from SES_MAX_SEND_RATE (default 14, a new production account).
 */
import { pass, sesThrottle, startFaultProxy, type Chooser, type FaultProxy } from './fault-proxy';

/** The rate of a new production SES account; `npm start` uses it unless SES_MAX_SEND_RATE says otherwise. */
export const DEFAULT_SES_ACCOUNT_RATE = 14;

/** Reads SES_MAX_SEND_RATE (recipients per second, above 0). */
export function sesAccountRateFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SES_MAX_SEND_RATE;
  if (raw === undefined || raw.trim() === '') return DEFAULT_SES_ACCOUNT_RATE;
  const rate = Number(raw);
  if (!Number.isFinite(rate) || rate <= 0) {
    throw new Error(`SES_MAX_SEND_RATE=${raw}: must be a number of recipients per second above 0`);
  }
  return rate;
}

export interface SesRateCounts {
  /** SendEmail requests let through. */
  readonly accepted: number;
  /** SendEmail requests answered 429. */
  readonly throttled: number;
  /** Recipients of the accepted requests. */
  readonly recipients: number;
}

interface SendEmailBody {
  readonly Destination?: {
    readonly ToAddresses?: readonly string[];
    readonly CcAddresses?: readonly string[];
    readonly BccAddresses?: readonly string[];
  };
}

/** Recipients of one SES v2 SendEmail body; 1 when it cannot be read (SES would refuse it anyway). */
export function recipientCount(body: Buffer): number {
  return readDestination(body).recipients;
}

/** A SendEmail request let through: when, its first To address, and how many recipients it had. */
export interface AcceptedSend {
  readonly at: number;
  readonly to: string;
  readonly recipients: number;
}

function readDestination(body: Buffer): { recipients: number; to: string } {
  try {
    const { Destination: d = {} } = JSON.parse(body.toString('utf8')) as SendEmailBody;
    const n = (d.ToAddresses?.length ?? 0) + (d.CcAddresses?.length ?? 0) + (d.BccAddresses?.length ?? 0);
    return { recipients: Math.max(1, n), to: d.ToAddresses?.[0] ?? '' };
  } catch {
    return { recipients: 1, to: '' };
  }
}

/** The limiter as a fault-proxy chooser: SendEmail over the rate gets SES's 429, everything else passes. */
export function sesRateLimiter(
  accountRatePerSecond: number,
  now: () => number = Date.now,
): { readonly chooser: Chooser; counts(): SesRateCounts; accepted(): readonly AcceptedSend[] } {
  if (!(accountRatePerSecond > 0)) {
    throw new Error(`accountRatePerSecond must be above 0, got ${accountRatePerSecond}`);
  }
  const capacity = Math.max(1, accountRatePerSecond);
  let tokens = capacity;
  let updatedAt = now();
  let accepted = 0;
  let throttled = 0;
  let recipients = 0;
  const log: AcceptedSend[] = [];
  const chooser: Chooser = (request) => {
    if (request.operation !== 'SendEmail') return pass();
    const t = now();
    tokens = Math.min(capacity, tokens + ((t - updatedAt) / 1000) * accountRatePerSecond);
    updatedAt = t;
    const { recipients: n, to } = readDestination(request.body);
    // SES counts each recipient; a single email above the bucket is allowed from a full one.
    if (tokens >= Math.min(n, capacity)) {
      tokens -= n;
      accepted += 1;
      recipients += n;
      log.push({ at: t, to, recipients: n });
      return pass();
    }
    throttled += 1;
    return sesThrottle();
  };
  return { chooser, counts: () => ({ accepted, throttled, recipients }), accepted: () => log };
}

export interface SesRateLimit {
  readonly endpoint: string;
  readonly port: number;
  /** The emulated SES account's maximum send rate, recipients per second (not the pipeline's maxSendRate). */
  readonly accountRatePerSecond: number;
  counts(): SesRateCounts;
  /** Every accepted SendEmail, in order: rate used over time and publish-to-accepted latency. */
  accepted(): readonly AcceptedSend[];
  close(): Promise<void>;
}

/** Starts the limiter on 127.0.0.1:`port` (0: a free one) in front of `target`. */
export async function startSesRateLimit(options: {
  readonly target: string;
  readonly accountRatePerSecond: number;
  readonly port?: number;
}): Promise<SesRateLimit> {
  const limiter = sesRateLimiter(options.accountRatePerSecond);
  const proxy: FaultProxy = await startFaultProxy({
    target: options.target,
    port: options.port ?? 0,
    mode: limiter.chooser,
  });
  return {
    endpoint: proxy.endpoint,
    port: proxy.port,
    accountRatePerSecond: options.accountRatePerSecond,
    counts: limiter.counts,
    accepted: limiter.accepted,
    close: () => proxy.close(),
  };
}
