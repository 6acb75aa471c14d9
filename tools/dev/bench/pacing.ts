/**
 * The pacing benchmark (`npm run bench -- pacing`): a burst of emails into a local SES whose
 * account allows `accountRatePerSecond` recipients a second (ses-rate-limit.ts, in front of
 * aws-ses-v2-local), with the pipeline's maxSendRate set to the same rate and maxConcurrency to
 * the number of consumer processes. Measured: achieved rate / allowed rate (from the first Publish to the
 * last send), the share of SendEmail requests SES throttled, the DLQ depth and duplicates.
 */
import { performance } from 'node:perf_hooks';
import type { ResolvedSettings } from '../../../lib/settings';
import type { Bundles } from '../local/build';
import { clearMailbox, readMailbox, type EmulatorEndpoints } from '../local/emulators';
import { LocalPipeline } from '../local/pipeline';
import { startSesRateLimit } from '../local/ses-rate-limit';
import { publishBurst, within } from './in-process';
import { round } from './stats';

export interface PacingResult {
  readonly emails: number;
  readonly consumers: number;
  /** Recipients per second the local SES allows, and the pipeline's maxSendRate. */
  readonly allowedRate: number;
  /** From the first Publish until the last email was sent, seconds. */
  readonly seconds: number;
  /** Emails per second over that time. */
  readonly achievedRate: number;
  readonly achievedOverAllowed: number;
  readonly sendEmailRequests: number;
  readonly throttledRequests: number;
  readonly throttledShare: number;
  readonly retries: number;
  readonly deadLettered: number;
  readonly duplicates: number;
}

export async function measurePacing(options: {
  readonly endpoints: EmulatorEndpoints;
  readonly bundles: Bundles;
  readonly settings: ResolvedSettings;
  readonly emails: number;
  readonly consumers: number;
  readonly timeoutMs?: number;
}): Promise<PacingResult> {
  const { emails, consumers, settings } = options;
  const limit = await startSesRateLimit({ target: options.endpoints.ses, accountRatePerSecond: settings.maxSendRate });
  let sent = 0;
  let retries = 0;
  let finishedAt = 0;
  let finish: () => void = () => undefined;
  const allSent = new Promise<void>((resolve) => (finish = resolve));
  const pipeline = await LocalPipeline.create({
    name: `bench-pacing-${Date.now().toString(36)}`,
    settings,
    endpoints: { ...options.endpoints, ses: limit.endpoint },
    bundles: options.bundles,
    onDecision: (event) => {
      if (event.decision === 'retry') retries += 1;
      if (event.decision === 'sent' && ++sent === emails) {
        finishedAt = performance.now();
        finish();
      }
    },
  });
  try {
    await Promise.all(Array.from({ length: consumers }, (_, i) => pipeline.startConsumer({ name: `pod-${i + 1}` })));
    await clearMailbox(options.endpoints.ses);
    const started = performance.now();
    await publishBurst(pipeline.sns, pipeline.resources.topicArn, emails);
    const timeoutMs = options.timeoutMs ?? Math.max(120_000, (emails / settings.maxSendRate) * 3000);
    await within(allSent, timeoutMs, () => `only ${sent} of ${emails} emails sent after ${timeoutMs} ms`);
    const seconds = (finishedAt - started) / 1000;
    const mailbox = await readMailbox(options.endpoints.ses);
    const recipients = new Map<string, number>();
    for (const email of mailbox.emails) {
      const to = email.destination.to[0] ?? '';
      recipients.set(to, (recipients.get(to) ?? 0) + 1);
    }
    const duplicates = [...recipients.values()].reduce((sum, n) => sum + n - 1, 0);
    const dlq = await pipeline.queueDepth('dlq');
    const counts = limit.counts();
    const requests = counts.accepted + counts.throttled;
    const achievedRate = emails / seconds;
    return {
      emails,
      consumers,
      allowedRate: settings.maxSendRate,
      seconds: round(seconds, 1),
      achievedRate: round(achievedRate, 2),
      achievedOverAllowed: round(achievedRate / settings.maxSendRate, 3),
      sendEmailRequests: requests,
      throttledRequests: counts.throttled,
      throttledShare: round(requests === 0 ? 0 : counts.throttled / requests, 4),
      retries,
      deadLettered: dlq.visible + dlq.inFlight,
      duplicates,
    };
  } finally {
    await pipeline.stop();
    await limit.close();
  }
}

export function formatPacing(result: PacingResult): string {
  const pct = (x: number) => `${round(100 * x, 2)} %`;
  return [
    `| measure | value | goal |`,
    `| --- | --- | --- |`,
    `| emails (one recipient each) | ${result.emails} | |`,
    `| consumers (maxConcurrency) | ${result.consumers} | |`,
    `| allowed rate (local SES and maxSendRate) | ${result.allowedRate}/s | |`,
    `| time, first Publish to last send | ${result.seconds} s | |`,
    `| achieved rate | ${result.achievedRate}/s | |`,
    `| achieved / allowed | ${result.achievedOverAllowed} | >= 0.9 |`,
    `| SendEmail requests throttled | ${result.throttledRequests} of ${result.sendEmailRequests} (${pct(result.throttledShare)}) | <= 2 % |`,
    `| retries | ${result.retries} | |`,
    `| dead-lettered | ${result.deadLettered} | 0 |`,
    `| duplicates | ${result.duplicates} | 0 |`,
  ].join('\n');
}
