/**
 * Item 1: end-to-end throughput on the local stack, dedupe on vs off. Each run gets a fresh
 * pipeline (topic, queue, DLQ, table) and fresh consumer processes running the real handler
 * bundle; the "off" consumers get POWERTOOLS_IDEMPOTENCY_DISABLED=true. The clock runs from the
 * first Publish to the moment the last "sent" decision is seen; the SES mailbox is then checked.
 * The variants run alternately, in the order on, off, off, on, on, off, ... after a warm-up.
 */
import { performance } from 'node:perf_hooks';
import type { ResolvedSettings } from '../../../lib/settings';
import type { Bundles } from '../local/build';
import { clearMailbox, readMailbox, type EmulatorEndpoints } from '../local/emulators';
import { LocalPipeline } from '../local/pipeline';
import { CPU_ROLES, cpuBetween, sampleCpu, type CpuRole, type CpuUse } from './cpu';
import { publishBurst, within } from './in-process';
import { median, round } from './stats';

export type DedupeVariant = 'on' | 'off';

export interface ThroughputRun {
  readonly variant: DedupeVariant;
  readonly round: number;
  /** From the first Publish until all were accepted, ms. */
  readonly publishMs: number;
  /** From the first Publish until the last email was sent, ms. */
  readonly totalMs: number;
  readonly messagesPerSecond: number;
  readonly emailsInMailbox: number;
  readonly duplicates: number;
  readonly retries: number;
  /** Handler invocations (batches) and their mean size. */
  readonly invocations: number;
  readonly meanBatchSize: number;
  /** CPU used between the first Publish and the last send (Linux only). */
  readonly cpu?: CpuUse;
}

export interface ThroughputResult {
  readonly messages: number;
  readonly consumers: number;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** One run of each variant before the measured ones (not counted). */
  readonly warmUp: readonly ThroughputRun[];
  readonly runs: readonly ThroughputRun[];
  readonly medianOn: number;
  readonly medianOff: number;
  /** medianOn / medianOff: the share of the undeduplicated throughput that remains with dedupe on. */
  readonly onOverOff: number;
  /** on / off within each round (the two runs next to each other in time), and their median. */
  readonly pairRatios: readonly number[];
  readonly medianPairRatio: number;
  readonly meanBatchSize: number;
  /** ChangeMessageVisibility calls per message: one per retry decision. */
  readonly visibilityChangesPerMessage: number;
  /** Per variant: median CPU ms per message by process role, median machine busy share, largest share used by others. */
  readonly cpu?: Readonly<Record<DedupeVariant, CpuUse>>;
}

export interface ThroughputOptions {
  readonly endpoints: EmulatorEndpoints;
  readonly bundles: Bundles;
  readonly settings: ResolvedSettings;
  readonly messages: number;
  readonly consumers: number;
  /** Rounds of (on, off); the order within a round alternates. */
  readonly rounds: number;
  readonly timeoutMs?: number;
}

async function runOnce(options: ThroughputOptions, variant: DedupeVariant, roundNo: number): Promise<ThroughputRun> {
  const { messages } = options;
  let sent = 0;
  let duplicates = 0;
  let retries = 0;
  let finishedAt = 0;
  let finish: () => void = () => undefined;
  const allSent = new Promise<void>((resolve) => (finish = resolve));
  const pipeline = await LocalPipeline.create({
    name: `bench-${variant}-${roundNo}-${Date.now().toString(36)}`,
    settings: options.settings,
    endpoints: options.endpoints,
    bundles: options.bundles,
    onDecision: (event) => {
      if (event.decision === 'sent' && ++sent === messages) {
        finishedAt = performance.now();
        finish();
      }
      if (event.decision === 'duplicate') duplicates += 1;
      if (event.decision === 'retry') retries += 1;
    },
  });
  try {
    const env = { POWERTOOLS_IDEMPOTENCY_DISABLED: variant === 'off' ? 'true' : 'false' };
    await Promise.all(
      Array.from({ length: options.consumers }, (_, i) => pipeline.startConsumer({ name: `pod-${i + 1}`, env })),
    );
    await clearMailbox(options.endpoints.ses);

    const cpuBefore = sampleCpu(options.bundles.consumer);
    const started = performance.now();
    await publishBurst(pipeline.sns, pipeline.resources.topicArn, messages);
    const publishMs = performance.now() - started;
    const timeoutMs = options.timeoutMs ?? 60_000;
    await within(
      allSent,
      timeoutMs,
      () => `only ${sent} of ${messages} emails sent after ${timeoutMs} ms (${variant})`,
    );
    const cpuAfter = sampleCpu(options.bundles.consumer);
    const totalMs = finishedAt - started;
    const mailbox = await readMailbox(options.endpoints.ses);
    if (mailbox.emails.length !== messages) {
      throw new Error(`${variant}: ${mailbox.emails.length} emails in the mailbox for ${messages} messages`);
    }
    const invocations = pipeline.batches.length;
    const handled = pipeline.batches.reduce((sum, b) => sum + b.size, 0);
    return {
      variant,
      round: roundNo,
      publishMs: round1(publishMs),
      totalMs: round1(totalMs),
      messagesPerSecond: round1((messages / totalMs) * 1000),
      emailsInMailbox: mailbox.emails.length,
      duplicates,
      retries,
      invocations,
      meanBatchSize: round(handled / Math.max(1, invocations), 2),
      ...(cpuBefore && cpuAfter ? { cpu: cpuBetween(cpuBefore, cpuAfter, messages) } : {}),
    };
  } finally {
    await pipeline.stop();
  }
}

const round1 = (x: number) => round(x, 1);

export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  // Round 0 warms the JVM of DynamoDB Local and the emulators' JITs; it is reported but not counted.
  const warmUp = [await runOnce(options, 'on', 0), await runOnce(options, 'off', 0)];
  const runs: ThroughputRun[] = [];
  for (let r = 1; r <= options.rounds; r += 1) {
    const order: DedupeVariant[] = r % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
    for (const variant of order) runs.push(await runOnce(options, variant, r));
  }
  const rate = (variant: DedupeVariant) =>
    median(runs.filter((r) => r.variant === variant).map((r) => r.messagesPerSecond));
  const pairRatios = Array.from({ length: options.rounds }, (_, i) => {
    const inRound = (variant: DedupeVariant) =>
      runs.find((r) => r.round === i + 1 && r.variant === variant)?.messagesPerSecond ?? Number.NaN;
    return round(inRound('on') / inRound('off'), 2);
  });
  const medianOn = rate('on');
  const medianOff = rate('off');
  const invocations = runs.reduce((sum, r) => sum + r.invocations, 0);
  const cpu = (variant: DedupeVariant): CpuUse | undefined => {
    const uses = runs.filter((r) => r.variant === variant).flatMap((r) => (r.cpu ? [r.cpu] : []));
    if (uses.length === 0) return undefined;
    const msPerMessage = Object.fromEntries(
      CPU_ROLES.map((role) => [role, round(median(uses.map((u) => u.msPerMessage[role])), 2)]),
    ) as Record<CpuRole, number>;
    return {
      msPerMessage,
      machineBusyShare: round(median(uses.map((u) => u.machineBusyShare)), 2),
      othersBusyShare: round(Math.max(...uses.map((u) => u.othersBusyShare)), 2),
    };
  };
  const cpuOn = cpu('on');
  const cpuOff = cpu('off');
  return {
    messages: options.messages,
    consumers: options.consumers,
    batchSize: options.settings.batchSize,
    maxBatchingWindowSeconds: options.settings.maxBatchingWindowSeconds,
    warmUp,
    runs,
    medianOn: round1(medianOn),
    medianOff: round1(medianOff),
    onOverOff: round(medianOn / medianOff, 2),
    pairRatios,
    medianPairRatio: round(median(pairRatios), 2),
    meanBatchSize: round((options.messages * runs.length) / Math.max(1, invocations), 2),
    visibilityChangesPerMessage: round(
      runs.reduce((sum, r) => sum + r.retries, 0) / (options.messages * runs.length),
      4,
    ),
    ...(cpuOn && cpuOff ? { cpu: { on: cpuOn, off: cpuOff } } : {}),
  };
}
