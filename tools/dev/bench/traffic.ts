/**
 * The traffic benchmark (`npm run bench -- --only traffic`): the shared rate lease and the
 * high-priority lane on the local stack, measured at the local SES layer (ses-rate-limit.ts, which
 * counts recipients as SES does and logs every SendEmail it accepts).
 *
 *   1. rate use: a burst into a local SES allowing `rate` recipients a second, the pipeline's
 *      maxSendRate the same and maxConcurrency 10, with 1, 2 and 10 consumer processes; rate used
 *      = recipients accepted per second / rate, from the first Publish and from the first acceptance;
 *      SendEmail requests throttled.
 *   2. publish-to-accepted latency (from the Publish call to SES accepting the SendEmail): at a
 *      steady load of half the rate, and during a `normal` burst for the burst's own emails and for
 *      `high` emails published one every `highEverySeconds` while it drains.
 * Every run also counts duplicates (SendEmails accepted twice for one address) and dead letters.
 */
import { PublishBatchCommand, PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { ResolvedSettings } from '../../../lib/settings';
import type { Bundles } from '../local/build';
import type { EmulatorEndpoints } from '../local/emulators';
import { METRIC } from '../../../lambdas/kernel/names';
import { LocalPipeline, type ConsumerLine } from '../local/pipeline';
import { startSesRateLimit, type AcceptedSend, type SesRateLimit } from '../local/ses-rate-limit';
import { chunk, within } from './in-process';
import { round } from './stats';

export interface RateUseResult {
  readonly consumers: number;
  readonly maxConcurrency: number;
  readonly emails: number;
  readonly allowedRate: number;
  /** Recipients per second from the first Publish to the last acceptance, over the allowed rate. */
  readonly rateUsedFromPublish: number;
  /** The same from the first acceptance (the pipeline's start-up left out). */
  readonly rateUsedFromFirstSend: number;
  readonly sendEmailRequests: number;
  readonly throttledShare: number;
  readonly duplicates: number;
  readonly deadLettered: number;
  readonly seconds: number;
  /** Writes to the shared rate lease per email (leases, borrows and failed conditional writes). */
  readonly leaseWritesPerEmail: number;
}

export interface LatencyFigures {
  readonly emails: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface LatencyResult {
  readonly allowedRate: number;
  readonly steady: LatencyFigures & { readonly publishedPerSecond: number };
  readonly burstNormal: LatencyFigures;
  readonly burstHigh: LatencyFigures & { readonly acceptedBeforeBurstDrained: number };
  readonly burstThrottledShare: number;
  readonly duplicates: number;
  readonly deadLettered: number;
}

interface Context {
  readonly endpoints: EmulatorEndpoints;
  readonly bundles: Bundles;
  readonly settings: ResolvedSettings;
}

const DOMAIN = 'traffic.example.com';
const email = (to: string) => ({ to, subject: `Traffic ${to}`, text: 'A benchmark email.' });

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function figures(latencies: readonly number[]): LatencyFigures {
  return {
    emails: latencies.length,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    maxMs: Math.round(Math.max(...latencies)),
  };
}

/** Publishes `addresses` as fast as SNS takes them (batches of 10, four in flight); records when each went. */
async function publishAll(
  sns: SNSClient,
  topicArn: string,
  addresses: readonly string[],
  publishedAt: Map<string, number>,
): Promise<void> {
  for (const group of chunk(chunk(addresses, 10), 4)) {
    await Promise.all(
      group.map(async (batch) => {
        const at = Date.now();
        const result = await sns.send(
          new PublishBatchCommand({
            TopicArn: topicArn,
            PublishBatchRequestEntries: batch.map((to, i) => ({ Id: String(i), Message: JSON.stringify(email(to)) })),
          }),
        );
        if (result.Failed?.length) throw new Error(`${result.Failed.length} publish(es) failed`);
        for (const to of batch) publishedAt.set(to, at);
      }),
    );
  }
}

/** Publishes one email to `topicArn`: the high-priority topic's are high priority. */
async function publishOne(sns: SNSClient, topicArn: string, to: string): Promise<number> {
  const at = Date.now();
  await sns.send(new PublishCommand({ TopicArn: topicArn, Message: JSON.stringify(email(to)) }));
  return at;
}

/** Resolves once every address has been accepted by SES at least once. */
async function allAccepted(limit: SesRateLimit, addresses: readonly string[], timeoutMs: number): Promise<void> {
  const wanted = new Set(addresses);
  const done = (async () => {
    for (;;) {
      const seen = new Set(limit.accepted().map((a) => a.to));
      if ([...wanted].every((to) => seen.has(to))) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  await within(done, timeoutMs, () => `not every email was accepted by SES within ${timeoutMs} ms`);
}

function duplicatesOf(accepted: readonly AcceptedSend[]): number {
  const seen = new Map<string, number>();
  for (const a of accepted) seen.set(a.to, (seen.get(a.to) ?? 0) + 1);
  return [...seen.values()].reduce((sum, n) => sum + n - 1, 0);
}

function firstAcceptance(accepted: readonly AcceptedSend[]): Map<string, number> {
  const at = new Map<string, number>();
  for (const a of accepted) if (!at.has(a.to)) at.set(a.to, a.at);
  return at;
}

/** Sums one metric over the EMF lines the consumers print. */
function metricCounter(name: string): { onLine: (line: ConsumerLine) => void; total: () => number } {
  let total = 0;
  return {
    onLine: (line) => {
      const value = line.json?.[name];
      if (line.json?._aws === undefined || value === undefined) return;
      for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'number') total += v;
    },
    total: () => total,
  };
}

async function withPipeline<T>(
  context: Context,
  label: string,
  body: (pipeline: LocalPipeline, limit: SesRateLimit, leaseWrites: () => number) => Promise<T>,
): Promise<T> {
  const writes = metricCounter(METRIC.rateLeaseWrites);
  const limit = await startSesRateLimit({
    target: context.endpoints.ses,
    accountRatePerSecond: context.settings.maxSendRate,
  });
  const pipeline = await LocalPipeline.create({
    name: `bench-${label}-${Date.now().toString(36)}`,
    settings: context.settings,
    endpoints: { ...context.endpoints, ses: limit.endpoint },
    bundles: context.bundles,
    onLine: writes.onLine,
  });
  try {
    return await body(pipeline, limit, writes.total);
  } finally {
    await pipeline.stop();
    await limit.close();
  }
}

async function deadLettered(pipeline: LocalPipeline): Promise<number> {
  const dlq = await pipeline.queueDepth('dlq');
  return dlq.visible + dlq.inFlight;
}

/** Rate use of a burst of `emails` with `consumers` consumer processes. */
export function measureRateUse(context: Context, consumers: number, emails: number): Promise<RateUseResult> {
  const rate = context.settings.maxSendRate;
  return withPipeline(context, `rate${consumers}`, async (pipeline, limit, leaseWrites) => {
    await Promise.all(Array.from({ length: consumers }, (_, i) => pipeline.startConsumer({ name: `pod-${i + 1}` })));
    const addresses = Array.from({ length: emails }, (_, i) => `rate${consumers}-${i}@${DOMAIN}`);
    const started = Date.now();
    await publishAll(pipeline.sns, pipeline.resources.topicArn, addresses, new Map());
    await allAccepted(limit, addresses, Math.max(120_000, (emails / rate) * 3000));
    const accepted = limit.accepted();
    const first = accepted[0]!.at;
    const last = accepted[accepted.length - 1]!.at;
    const recipients = accepted.reduce((sum, a) => sum + a.recipients, 0);
    const counts = limit.counts();
    const requests = counts.accepted + counts.throttled;
    return {
      consumers,
      maxConcurrency: context.settings.maxConcurrency,
      emails,
      allowedRate: rate,
      rateUsedFromPublish: round(recipients / ((last - started) / 1000) / rate, 3),
      // n sends span n - 1 intervals.
      rateUsedFromFirstSend: round((recipients - 1) / ((last - first) / 1000) / rate, 3),
      sendEmailRequests: requests,
      throttledShare: round(requests === 0 ? 0 : counts.throttled / requests, 4),
      duplicates: duplicatesOf(accepted),
      deadLettered: await deadLettered(pipeline),
      seconds: round((last - started) / 1000, 1),
      leaseWritesPerEmail: round(leaseWrites() / emails, 3),
    };
  });
}

/** Publish-to-accepted latency: steady, then a normal burst with high emails published while it drains. */
export function measureLatency(
  context: Context,
  options: {
    readonly steadySeconds: number;
    readonly burstEmails: number;
    readonly highEmails: number;
    readonly highEverySeconds: number;
  },
): Promise<LatencyResult> {
  const rate = context.settings.maxSendRate;
  return withPipeline(context, 'latency', async (pipeline, limit) => {
    await Promise.all([
      pipeline.startConsumer({ name: 'pod-1' }),
      pipeline.startConsumer({ name: 'pod-2' }),
      pipeline.startConsumer({ name: 'high-1', lane: 'high' }),
    ]);
    const { sns } = pipeline;
    const topicArn = pipeline.resources.topicArn;
    // Steady: half the rate, one Publish at a time, evenly spaced.
    const steadyRate = rate / 2;
    const steady = new Map<string, number>();
    const steadyCount = Math.round(steadyRate * options.steadySeconds);
    const steadyStart = Date.now();
    for (let i = 0; i < steadyCount; i += 1) {
      const due = steadyStart + (i * 1000) / steadyRate;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      steady.set(`steady-${i}@${DOMAIN}`, await publishOne(sns, topicArn, `steady-${i}@${DOMAIN}`));
    }
    await allAccepted(limit, [...steady.keys()], 60_000);
    const throttledBefore = limit.counts();

    // Burst: every normal email at once; high ones one by one while it drains.
    const burst = new Map<string, number>();
    const burstAddresses = Array.from({ length: options.burstEmails }, (_, i) => `burst-${i}@${DOMAIN}`);
    await publishAll(sns, topicArn, burstAddresses, burst);
    const high = new Map<string, number>();
    for (let i = 0; i < options.highEmails; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, options.highEverySeconds * 1000));
      high.set(
        `high-${i}@${DOMAIN}`,
        await publishOne(sns, pipeline.resources.highPriorityTopicArn, `high-${i}@${DOMAIN}`),
      );
    }
    await allAccepted(
      limit,
      [...burstAddresses, ...high.keys()],
      Math.max(120_000, (options.burstEmails / rate) * 3000),
    );
    const accepted = limit.accepted();
    const at = firstAcceptance(accepted);
    const latencies = (published: Map<string, number>) => [...published].map(([to, t]) => at.get(to)! - t);
    const burstDrained = Math.max(...burstAddresses.map((to) => at.get(to)!));
    const counts = limit.counts();
    const burstRequests = counts.accepted + counts.throttled - throttledBefore.accepted - throttledBefore.throttled;
    return {
      allowedRate: rate,
      steady: { ...figures(latencies(steady)), publishedPerSecond: steadyRate },
      burstNormal: figures(latencies(burst)),
      burstHigh: {
        ...figures(latencies(high)),
        acceptedBeforeBurstDrained: [...high.keys()].filter((to) => at.get(to)! < burstDrained).length,
      },
      burstThrottledShare: round((counts.throttled - throttledBefore.throttled) / Math.max(1, burstRequests), 4),
      duplicates: duplicatesOf(accepted),
      deadLettered: await deadLettered(pipeline),
    };
  });
}

export function formatTraffic(rateUse: readonly RateUseResult[], latency: LatencyResult | undefined): string {
  const pct = (x: number) => `${round(100 * x, 2)} %`;
  const lines = [
    '| containers / maxConcurrency | emails | rate used (from first Publish) | rate used (from first send) | throttled | lease writes per email | duplicates | dead-lettered | time |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rateUse.map(
      (r) =>
        `| ${r.consumers} / ${r.maxConcurrency} | ${r.emails} | ${r.rateUsedFromPublish} | ${r.rateUsedFromFirstSend} | ${r.throttledShare === 0 ? '0' : pct(r.throttledShare)} of ${r.sendEmailRequests} | ${r.leaseWritesPerEmail} | ${r.duplicates} | ${r.deadLettered} | ${r.seconds} s |`,
    ),
  ];
  if (latency) {
    const row = (name: string, f: LatencyFigures) =>
      `| ${name} | ${f.emails} | ${f.p50Ms} ms | ${f.p99Ms} ms | ${f.maxMs} ms |`;
    lines.push(
      '',
      '| publish to accepted | emails | p50 | p99 | max |',
      '| --- | --- | --- | --- | --- |',
      row(`steady, ${latency.steady.publishedPerSecond}/s (half the rate)`, latency.steady),
      row('burst: its normal emails', latency.burstNormal),
      row('burst: high emails published during it', latency.burstHigh),
      '',
      `High emails accepted before the burst drained: ${latency.burstHigh.acceptedBeforeBurstDrained} of ${latency.burstHigh.emails}; ` +
        `throttled in the burst: ${pct(latency.burstThrottledShare)}; duplicates: ${latency.duplicates}; dead-lettered: ${latency.deadLettered}.`,
    );
  }
  return lines.join('\n');
}
