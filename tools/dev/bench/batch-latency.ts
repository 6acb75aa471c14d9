/**
 * Item 3: wall-clock of one invocation with a full batch and SES answering after a fixed delay,
 * records processed in parallel vs one after another. A third variant, parallel with the
 * dedupe switched off, gives the Lambda time the idempotency writes add (used by the cost model).
 * Every invocation carries new SNS MessageIds, so each record makes a real claim and completion.
 */
import { randomUUID } from 'node:crypto';
import { benchEmail, FakeSes, newHandler, runBatches, snsRecord, type InProcessStack } from './in-process';
import { median, round, timeMs } from './stats';

/** Wall-clock and this process's CPU time (user + system) of one call, ms. */
async function measure(body: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const wallMs = await timeMs(body);
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

const VARIANTS = {
  parallel: { processInParallel: true, idempotency: true },
  sequential: { processInParallel: false, idempotency: true },
  parallelNoDedupe: { processInParallel: true, idempotency: false },
} as const;
type Variant = keyof typeof VARIANTS;

export interface BatchLatencyResult {
  readonly sesLatencyMs: number;
  readonly batchSize: number;
  /** Timed invocations per variant (after one untimed warm-up each). */
  readonly repetitions: number;
  /** Medians, ms. */
  readonly parallelMs: number;
  readonly sequentialMs: number;
  readonly parallelNoDedupeMs: number;
  readonly sequentialOverParallel: number;
  /** Median parallel (dedupe on) minus median parallel (dedupe off), ms per batch. */
  readonly dedupeExtraMsPerBatch: number;
  /** Median CPU time of the handler process per batch (DynamoDB Local not included), ms. */
  readonly cpuMsPerBatch: Readonly<Record<Variant, number>>;
  /** Wall-clock of every timed invocation, ms. */
  readonly samples: Readonly<Record<Variant, readonly number[]>>;
}

export async function measureBatchLatency(
  stack: InProcessStack,
  options: { readonly sesLatencyMs: number; readonly repetitions: number },
): Promise<BatchLatencyResult> {
  const batchSize = stack.settings.batchSize;
  let next = 1_000_000;
  const batch = () => Array.from({ length: batchSize }, () => snsRecord(stack, randomUUID(), benchEmail(next++)));
  const variants = Object.keys(VARIANTS) as Variant[];
  const handlers = Object.fromEntries(
    variants.map((v) => [v, newHandler(stack, { ses: new FakeSes(options.sesLatencyMs), ...VARIANTS[v] })]),
  ) as Record<Variant, ReturnType<typeof newHandler>>;
  const samples: Record<Variant, number[]> = { parallel: [], sequential: [], parallelNoDedupe: [] };
  const cpu: Record<Variant, number[]> = { parallel: [], sequential: [], parallelNoDedupe: [] };
  try {
    for (const v of variants) await runBatches(handlers[v].invoke, [batch()]); // warm-up: connections, JIT
    for (let rep = 0; rep < options.repetitions; rep += 1) {
      // Rotate the order so that no variant always runs first.
      for (let i = 0; i < variants.length; i += 1) {
        const v = variants[(rep + i) % variants.length] as Variant;
        const records = batch();
        const { wallMs, cpuMs } = await measure(() => runBatches(handlers[v].invoke, [records]));
        samples[v].push(wallMs);
        cpu[v].push(cpuMs);
      }
    }
  } finally {
    for (const v of variants) handlers[v].close();
  }
  const parallelMs = median(samples.parallel);
  const sequentialMs = median(samples.sequential);
  const parallelNoDedupeMs = median(samples.parallelNoDedupe);
  return {
    sesLatencyMs: options.sesLatencyMs,
    batchSize,
    repetitions: options.repetitions,
    parallelMs: round(parallelMs, 1),
    sequentialMs: round(sequentialMs, 1),
    parallelNoDedupeMs: round(parallelNoDedupeMs, 1),
    sequentialOverParallel: round(sequentialMs / parallelMs, 2),
    dedupeExtraMsPerBatch: round(parallelMs - parallelNoDedupeMs, 1),
    cpuMsPerBatch: {
      parallel: round(median(cpu.parallel), 1),
      sequential: round(median(cpu.sequential), 1),
      parallelNoDedupe: round(median(cpu.parallelNoDedupe), 1),
    },
    samples: {
      parallel: samples.parallel.map((x) => round(x, 1)),
      sequential: samples.sequential.map((x) => round(x, 1)),
      parallelNoDedupe: samples.parallelNoDedupe.map((x) => round(x, 1)),
    },
  };
}
