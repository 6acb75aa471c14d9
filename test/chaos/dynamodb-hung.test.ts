/**
 * Scenario 7, the idempotency store hangs: DynamoDB (behind one proxy for both pods) accepts
 * every request and answers none for 70 s, as a frozen or partitioned endpoint does, while
 * 20 emails are published; then the held requests go through late and it answers again.
 *
 * Time is scaled by 1/20 from the defaults: backoff cap 300 s -> 15 s (base 2 s -> 1 s, the
 * least), retry budget 24 h -> 72 min. The old budget of ~100 s (maxReceiveCount receives)
 * becomes 5 s, and the outage lasts 70 s, more than ten times that. The store client's own
 * timeouts are not scaled (3 s x 3 attempts per claim): at these settings the old budget
 * would have dead-lettered every message after five hung claims, about 60 s. Now each
 * retry goes back as a delayed copy within the retry budget, and every email is sent once
 * after the store recovers; none is dead-lettered.
 */
import { pass } from '../../tools/dev/local/fault-proxy';
import { until } from '../integration/support';
import { ChaosRun, expectReliable, hungUntil, stopRuns } from './harness';

afterEach(stopRuns);

const MESSAGES = 20;
const OUTAGE_MS = 70_000;
const MAX_RECEIVE_COUNT = 5;

test('DynamoDB hung for 70 s (ten times the old scaled budget): every email sent once after it, none dead-lettered', async () => {
  const run = await ChaosRun.start({
    order: 7,
    scenario: 'DynamoDB hung',
    consumers: 2,
    dynamodbProxy: true,
    settings: {
      maxReceiveCount: MAX_RECEIVE_COUNT,
      // A hung claim takes the store client's full timeout (about 10 s): the invocation outlasts it.
      functionTimeoutSeconds: 15,
      retryBudgetSeconds: 72 * 60,
    },
    env: { RETRY_BASE_SECONDS: '1', RETRY_CAP_SECONDS: '15' },
  });
  const store = run.dynamodb;
  if (!store) throw new Error('no DynamoDB proxy');
  await run.startPods();

  const outageStarted = Date.now();
  const outageEnds = outageStarted + OUTAGE_MS;
  store.set(() => hungUntil(outageEnds));
  await run.publishEmails(MESSAGES);
  await until('the outage to end', () => Date.now() >= outageEnds, OUTAGE_MS + 5000);
  store.set(pass());
  const held = store.counts().delay;
  const retries = run.decisions('retry');
  const storeRetries = retries.filter((d) => d.errorCode === 'StoreUnavailable');
  const sentDuringOutage = run.decisions('sent').length;

  await run.settle(180_000);
  const attempts = new Map<string, number>();
  for (const d of run.decisions('retry')) {
    const key = String(d.dedupeKey);
    attempts.set(key, Math.max(attempts.get(key) ?? 0, Number(d.attempt ?? 0)));
  }
  const mostAttempts = Math.max(0, ...attempts.values());
  run.faults.push(
    `DynamoDB hung ${(OUTAGE_MS / 1000).toFixed(0)} s (${held} requests held, answered late), ${MESSAGES} published into it; ` +
      `${storeRetries.length} claims timed out and went back as delayed copies; up to ${mostAttempts} attempts per message ` +
      `(maxReceiveCount ${MAX_RECEIVE_COUNT})`,
  );
  const result = await run.finish();

  expectReliable(result);
  expect(sentDuringOutage).toBe(0);
  expect(storeRetries.length).toBeGreaterThanOrEqual(MESSAGES);
  expect(result.emailsSent).toBe(MESSAGES);
  expect(result.duplicates).toBe(0);
  expect(result.deadLettered).toEqual({});
  // The old budget (maxReceiveCount receives) would have dead-lettered these.
  expect(mostAttempts).toBeGreaterThanOrEqual(MAX_RECEIVE_COUNT);
  // Each copy was decided on in its first receive: no receive count climbed toward the redrive.
  expect(run.decisions('retry').every((d) => d.receiveCount === 1)).toBe(true);
}, 300_000);
