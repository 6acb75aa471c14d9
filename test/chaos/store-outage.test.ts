/**
 * Scenario 3, the idempotency store goes away mid-run: DynamoDB (behind one fault proxy for
 * all three pods) drops every connection for at least five seconds once a third of the
 * emails are out, then comes back. Every envelope is on the queue twice, so dedupe is
 * exercised across the outage.
 *
 * Fail-closed: a claim that cannot be written is retried through the queue, never sent. A
 * send SES accepted whose completion write fails is not retried; the handler keeps writing
 * the completion until shortly before its invocation ends. With an invocation longer than
 * the outage (as in production) every completion lands and no copy can send again.
 */
import { down, pass } from '../../lib/local/fault-proxy';
import { until } from '../integration/support';
import { completionUnwritten } from './account';
import { ChaosRun, expectReliable, stopRuns } from './harness';

afterEach(stopRuns);

const MESSAGES = 150;
const OUTAGE_MS = 5000;

test('DynamoDB down for several seconds mid-run loses nothing and sends nothing unprotected', async () => {
  const run = await ChaosRun.start({
    order: 3,
    scenario: 'DynamoDB outage',
    dynamodbProxy: true,
    // As in production, an invocation outlasts the outage (30 s there, 10 s here), so a
    // completion write that fails mid-outage is retried until the store is back.
    settings: { functionTimeoutSeconds: 10 },
    // Backoff 1, 2, 4 s: an outage costs a message a few receives, not one a second.
    env: { RETRY_CAP_SECONDS: '4' },
  });
  const store = run.dynamodb;
  if (!store) throw new Error('no DynamoDB proxy');
  await run.publishEmails(MESSAGES);
  await run.copyEnvelopes(2);
  await run.startPods();

  await until('a third of the emails sent', () => run.decisions('sent').length >= MESSAGES / 3);
  store.set(down());
  const outageStarted = Date.now();
  const refused = () => run.decisions('retry').filter((d) => d.errorCode === 'StoreUnavailable').length;
  await until(
    `${OUTAGE_MS} ms of outage, felt by the pods`,
    () => Date.now() - outageStarted >= OUTAGE_MS && refused() >= 20,
    OUTAGE_MS + 20_000,
  );
  store.set(pass());
  const outageMs = Date.now() - outageStarted;
  const dropped = store.counts().down;

  await run.settle();
  const completionFailures = run.decisions('sent').filter(completionUnwritten).length;
  const completionsRecovered = run.decisions('sent').filter((d) => d.completionWritten === true).length;
  run.faults.push(
    `DynamoDB down ${(outageMs / 1000).toFixed(1)} s after ${MESSAGES / 3} sends (${dropped} requests dropped, ` +
      `${refused()} claims retried as StoreUnavailable, ${completionsRecovered} completion writes retried until the store was back, ` +
      `${completionFailures} never written); every envelope enqueued twice`,
  );
  const result = await run.finish();

  expectReliable(result);
  expect(refused()).toBeGreaterThanOrEqual(20);
  expect(run.decisions('sent').filter((d) => d.failOpen)).toEqual([]);
  expect(result.emailsSent - result.duplicates).toBe(MESSAGES);
  expect(result.deadLettered).toEqual({});
  // Fail-closed, and the invocation outlasts the outage: every completion is written in the
  // end, so no copy can send again.
  expect(completionFailures).toBe(0);
  expect(result.duplicates).toBe(0);
}, 180_000);
