/**
 * How many attachment bytes one container holds at once. A batch's records run in parallel and
 * each email's files are read whole (S3 bytes, then SES's base64 request): without a bound, ten
 * emails of 25 MiB of files need about 680 MiB (BENCHMARKS.md, Attachment memory). A record asks for its
 * files' size before reading them and waits, first come first served, until that much is free;
 * it never fails for it. An email larger than the whole budget runs when nothing else is held,
 * alone.
 */

/** Returned by {@link ByteBudget.acquire}: gives the bytes back (once; later calls do nothing). */
export type Release = () => void;

export interface ByteBudget {
  /** Waits until `bytes` fit (all of the budget for an email larger than it), then holds them. */
  acquire(bytes: number): Promise<Release>;
  /** Bytes held now (for tests and logs). */
  held(): number;
}

/** Bytes of files per MB of function memory, and the memory kept for the runtime and the handler. */
export const BUDGET_FACTORS = {
  /**
   * Measured: an email costs about 2.4 × its files' bytes (raw, base64 in the request, the request),
   * and garbage not yet collected adds to it; 4 keeps a 512 MB function under 370 MiB with ten of the
   * largest emails in a batch (BENCHMARKS.md, Attachment memory).
   */
  memoryPerFileByte: 4,
  /** The runtime, the SDK clients and a batch without files: about 115 MiB measured, kept with headroom. */
  reservedMb: 160,
  /** Never below one largest email (25 MiB of files). */
  minimumBytes: 25 * 1024 * 1024,
} as const;

/** The budget for a function of `memoryMb`: what is left after the reserve, per byte of files. */
export function budgetForMemory(memoryMb: number): number {
  const free = Math.max(0, memoryMb - BUDGET_FACTORS.reservedMb) * 1024 * 1024;
  return Math.max(BUDGET_FACTORS.minimumBytes, Math.floor(free / BUDGET_FACTORS.memoryPerFileByte));
}

/** Lambda sets it from the function's memory (the construct's memorySizeMb); the local consumers too. */
export const MEMORY_ENV = 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE';
/** Outside Lambda without it: the construct's default memorySizeMb. */
const DEFAULT_MEMORY_MB = 512;

/** The budget for the function's memory as the environment states it. */
export function budgetFromEnvironment(env: NodeJS.ProcessEnv): ByteBudget {
  const memoryMb = Number(env[MEMORY_ENV]);
  return createByteBudget(budgetForMemory(Number.isFinite(memoryMb) && memoryMb > 0 ? memoryMb : DEFAULT_MEMORY_MB));
}

export function createByteBudget(capacity: number): ByteBudget {
  if (!(capacity > 0)) throw new Error(`byte budget must be positive, got ${capacity}`);
  let held = 0;
  const waiting: { readonly bytes: number; readonly grant: () => void }[] = [];

  const fits = (bytes: number) => held === 0 || held + bytes <= capacity;

  function admit(bytes: number): Release {
    held += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held -= bytes;
      // First come first served: the head waits for room even when a smaller one behind it would fit,
      // so a large email is never starved by a stream of small ones.
      while (waiting.length > 0 && fits(waiting[0]!.bytes)) waiting.shift()!.grant();
    };
  }

  return {
    acquire(requested) {
      const bytes = Math.min(Math.max(0, requested), capacity);
      if (bytes === 0) return Promise.resolve(() => undefined);
      if (waiting.length === 0 && fits(bytes)) return Promise.resolve(admit(bytes));
      return new Promise<Release>((resolve) => waiting.push({ bytes, grant: () => resolve(admit(bytes)) }));
    },
    held: () => held,
  };
}
