/**
 * The shared rate lease and the high-priority lane end to end, on the emulators, measured at the local
 * SES layer (tools/dev/local/ses-rate-limit.ts, which counts recipients as SES does and logs what it
 * accepts): two consumers with maxConcurrency 10 together use at least 90 % of a small local rate
 * without going over it, and a high-priority email overtakes a queued normal burst. Ratios over a
 * window, not absolute times.
 */
import { PublishBatchCommand, PublishCommand } from '@aws-sdk/client-sns';
import { startSesRateLimit, type SesRateLimit } from '../../tools/dev/local/ses-rate-limit';
import {
  email,
  endpointsFromEnv,
  startTestPipeline,
  until,
  type TestPipeline,
  type TestPipelineOptions,
} from './support';

const RATE = 10;
/** Room for a send to wait for its slot: the default 2 s of the tests would leave none. */
const SETTINGS = { maxSendRate: RATE, maxConcurrency: 10, functionTimeoutSeconds: 10 } as const;

let limit: SesRateLimit | undefined;
let running: TestPipeline | undefined;
afterEach(async () => {
  await running?.stop();
  await limit?.close();
  running = undefined;
  limit = undefined;
});

async function start(consumers: TestPipelineOptions['consumers']): Promise<TestPipeline> {
  limit = await startSesRateLimit({ target: endpointsFromEnv().ses, accountRatePerSecond: RATE });
  running = await startTestPipeline({ settings: SETTINGS, consumers, endpoints: { ses: limit.endpoint } });
  return running;
}

async function publishBurst(p: TestPipeline, addresses: readonly string[]): Promise<void> {
  for (let i = 0; i < addresses.length; i += 10) {
    await p.pipeline.sns.send(
      new PublishBatchCommand({
        TopicArn: p.pipeline.resources.topicArn,
        PublishBatchRequestEntries: addresses
          .slice(i, i + 10)
          .map((to, j) => ({ Id: String(j), Message: JSON.stringify(email(to)) })),
      }),
    );
  }
}

const acceptedAt = (to: string) => limit!.accepted().find((a) => a.to === to)?.at;

test('two consumers with maxConcurrency 10 together use at least 90 % of the rate, and SES throttles at most 2 %', async () => {
  const p = await start([{}, {}]);
  const addresses = Array.from({ length: 100 }, (_, i) => p.address(`r${i}`));
  await publishBurst(p, addresses);
  await until('every email accepted', () => addresses.every((to) => acceptedAt(to) !== undefined), 60_000);

  const accepted = limit!.accepted().filter((a) => addresses.includes(a.to));
  const seconds = (accepted[accepted.length - 1]!.at - accepted[0]!.at) / 1000;
  // n sends span n - 1 intervals; the static share would have given 2 × 10 / 10 = 2 per second (0.2).
  expect((accepted.length - 1) / seconds / RATE).toBeGreaterThanOrEqual(0.9);
  const { accepted: ok, throttled } = limit!.counts();
  expect(throttled / (ok + throttled)).toBeLessThanOrEqual(0.02);
  expect(accepted).toHaveLength(100); // once each
  expect((await p.pipeline.queueDepth('dlq')).visible).toBe(0);
});

test('a high-priority email overtakes a queued normal burst and is sent once', async () => {
  const p = await start([{}, {}, { lane: 'high', name: 'high-1' }]);
  const burst = Array.from({ length: 60 }, (_, i) => p.address(`b${i}`));
  await publishBurst(p, burst);
  await until('the burst is being sent', () => limit!.accepted().length >= 5, 30_000);
  const code = p.address('sign-in-code');
  const published = Date.now();
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: p.pipeline.resources.highPriorityTopicArn,
      Message: JSON.stringify(email(code, 'Your sign-in code')),
    }),
  );
  await until(
    'the burst and the code accepted',
    () => [...burst, code].every((to) => acceptedAt(to) !== undefined),
    60_000,
  );

  const drained = Math.max(...burst.map((to) => acceptedAt(to)!));
  expect(acceptedAt(code)!).toBeLessThan(drained);
  // Well ahead of the burst: a fraction of the time the burst took to drain after it was published.
  expect(acceptedAt(code)! - published).toBeLessThan((drained - published) / 2);
  // Queued once: the high-priority topic feeds the high-priority queue only.
  await until('settled', async () => p.pipeline.isDrained(), 60_000);
  expect(limit!.accepted().filter((a) => a.to === code)).toHaveLength(1);
  expect(p.decisions('sent').filter((d) => d.to?.length && d.consumer === 'high-1')).toHaveLength(1);
  expect(p.decisions('duplicate')).toHaveLength(0);
});
