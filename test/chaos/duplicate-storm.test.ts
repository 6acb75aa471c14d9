/**
 * Scenario 1, duplicate storm: 300 unique emails, every SNS envelope on the queue three
 * times, and one in five published twice by a "retrying publisher" with the same
 * idempotency key, consumed by three pods at once. No fault can make SES's outcome unknown
 * here, so the only acceptable result is each email sent exactly once.
 */
import { ChaosRun, expectReliable, stopRuns } from './harness';

afterEach(stopRuns);

test('300 emails, each delivered 3 to 6 times across 3 consumers, are each sent exactly once', async () => {
  const run = await ChaosRun.start({ order: 1, scenario: 'duplicate storm' });
  await run.publishEmails(300, (i) => (i % 5 === 0 ? { key: `order-${i}`, publisherRetries: 1 } : {}));
  await run.copyEnvelopes(3);
  run.faults.push('every envelope enqueued 3 times, shuffled; 60 of 300 published twice with the same key');
  await run.startPods();

  const result = await run.finish();

  expectReliable(result);
  expect(result.emailsSent).toBe(300);
  expect(result.duplicates).toBe(0);
  expect(result.deliveries).toBe(3 * 360);
  // The copies really raced: most keys were claimed on one pod and suppressed on another.
  expect(new Set(run.decisions('duplicate').map((d) => d.consumer)).size).toBe(3);
}, 180_000);
