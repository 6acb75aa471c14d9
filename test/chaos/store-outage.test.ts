/**
 * Scenario 3, the idempotency store goes away mid-run: DynamoDB (behind one fault proxy for
 * all three pods) drops every connection for five seconds once a third of the emails are
 * out, then comes back. Every envelope is on the queue twice, so dedupe is exercised across
 * the outage.
 *
 * Fail-closed: a claim that cannot be written is retried through the queue, never sent. A
 * send SES accepted whose completion write fails is not retried; the handler keeps writing
 * the completion until shortly before its invocation ends. With an invocation longer than
 * the outage (as in production) every completion lands and no copy can send again.
 *
 * The timing holds on a slow machine: the outage's clock starts when the pods first feel it
 * (the first request the proxy drops) and stops after a fixed length, never after a count of
 * refusals that the machine's speed decides; and the function timeout is derived from the
 * outage, so an invocation that was mid-send when the store went away still has room for
 * its completion write after the store is back, whatever the machine's speed.
 */
import { down, pass } from '../../tools/dev/local/fault-proxy';
import { sleep, until } from '../integration/support';
import { COMPLETION_RETRY_MARGIN_MS } from '../../lambdas/send-email/testing';
import { completionUnwritten } from './account';
import { ChaosRun, expectReliable, stopRuns } from './harness';

afterEach(stopRuns);

const MESSAGES = 150;
const OUTAGE_MS = 5000;
/**
 * Three outages long: an invocation that was mid-batch when the store went away (started up
 * to an outage before it, on a slow machine) still has more than the completion retry's
 * longest pause (2 s) plus its margin left after the store is back.
 */
const FUNCTION_TIMEOUT_SECONDS = (3 * OUTAGE_MS) / 1000;

test('DynamoDB down for several seconds mid-run loses nothing and sends nothing unprotected', async () => {
  const run = await ChaosRun.start({
    order: 3,
    scenario: 'DynamoDB outage',
    dynamodbProxy: true,
    // As in production, an invocation outlasts the outage (30 s there), so a completion
    // write that fails mid-outage is retried until the store is back.
    settings: { functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS },
    // Backoff 1, 2, 4 s: an outage costs a message a few receives, not one a second.
    env: { RETRY_CAP_SECONDS: '4' },
  });
  const store = run.dynamodb;
  if (!store) throw new Error('no DynamoDB proxy');
  await run.publishEmails(MESSAGES);
  await run.copyEnvelopes(2);
  await run.startPods();

  await until('a third of the emails sent', () => run.decisions('sent').length >= MESSAGES / 3);
  const switchedAt = Date.now();
  store.set(down());
  await until('the pods to feel the outage (a dropped request)', () => store.counts().down > 0);
  const feltAt = Date.now();
  await sleep(OUTAGE_MS);
  store.set(pass());
  const outageMs = Date.now() - switchedAt;
  const dropped = store.counts().down;
  const refused = () => run.decisions('retry').filter((d) => d.errorCode === 'StoreUnavailable').length;

  await run.settle();
  const completionFailures = run.decisions('sent').filter(completionUnwritten).length;
  const completionsRecovered = run.decisions('sent').filter((d) => d.completionWritten === true).length;
  run.faults.push(
    `DynamoDB down ${(outageMs / 1000).toFixed(1)} s (felt after ${feltAt - switchedAt} ms) after ${MESSAGES / 3} sends, ` +
      `function timeout ${FUNCTION_TIMEOUT_SECONDS} s (${dropped} requests dropped, ` +
      `${refused()} claims retried as StoreUnavailable, ${completionsRecovered} completion writes retried until the store was back, ` +
      `${completionFailures} never written); every envelope enqueued twice`,
  );
  const result = await run.finish();

  expectReliable(result);
  // The scenario's precondition: the store came back with room left in every invocation that
  // was mid-send when it went away (completion retries pause at most 2 s).
  expect(outageMs).toBeLessThan(FUNCTION_TIMEOUT_SECONDS * 1000 - OUTAGE_MS - 2000 - COMPLETION_RETRY_MARGIN_MS);
  // The outage was felt by the handlers: claims refused (retried through the queue) or
  // completion writes retried, or both; which of them depends on where each pod was in its
  // batch when the store went away (pods busy writing completions claim nothing new), so
  // neither count alone is asserted. test/integration/failures.e2e.test.ts covers refused
  // claims on their own.
  expect(refused() + completionsRecovered).toBeGreaterThan(0);
  expect(run.decisions('sent').filter((d) => d.failOpen)).toEqual([]);
  expect(result.emailsSent - result.duplicates).toBe(MESSAGES);
  expect(result.deadLettered).toEqual({});
  // What the scenario means: no completion write ran out of invocation, so no copy could
  // find its claim expired and send again.
  expect(completionFailures).toBe(0);
  expect(result.duplicates).toBe(0);
}, 180_000);
