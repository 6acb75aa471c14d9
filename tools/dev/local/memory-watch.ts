/**
 * Lambda ends a container whose memory goes above the function's setting; the invocation fails
 * and its batch comes back after the visibility timeout. A local consumer does the same: it
 * samples its own RSS and, above the limit, says so on stdout and kills itself (SIGKILL, as
 * Lambda's runtime is killed: no batch is finished or deleted).
 */

/** What the consumer prints before it dies (a JSON line with its `consumer` field). */
export const OUT_OF_MEMORY_EVENT = 'out-of-memory';

export interface MemoryWatchOptions {
  /** The function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), in MB. */
  readonly limitMb: number;
  /** How often RSS is sampled. @default 50 ms */
  readonly intervalMs?: number;
  /** Reads the resident set size in bytes. @default process.memoryUsage.rss */
  readonly rss?: () => number;
  /** Called once above the limit, before `kill`. */
  readonly onExceeded: (rssMb: number, peakMb: number) => void;
  /** Ends the process. @default SIGKILL to itself */
  readonly kill?: () => void;
}

export interface MemoryWatch {
  /** Highest RSS seen so far, in MB. */
  peakMb(): number;
  stop(): void;
}

const MB = 1024 * 1024;

export function watchMemory(options: MemoryWatchOptions): MemoryWatch {
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const kill = options.kill ?? (() => process.kill(process.pid, 'SIGKILL'));
  let peak = 0;
  let exceeded = false;
  const timer = setInterval(() => {
    const now = rss() / MB;
    peak = Math.max(peak, now);
    if (now > options.limitMb && !exceeded) {
      exceeded = true;
      clearInterval(timer);
      options.onExceeded(Math.round(now), Math.round(peak));
      kill();
    }
  }, options.intervalMs ?? 50);
  timer.unref();
  return { peakMb: () => Math.round(peak), stop: () => clearInterval(timer) };
}
