/**
 * Scenario 8, SES throttles every request for a long stretch: for 50 s each SendEmail, from
 * any pod, is answered 429 TooManyRequestsException (the account's rate is taken by another
 * sender, or its quota was lowered), then SES accepts again.
 *
 * Time is scaled by 1/20 as in the DynamoDB-hung scenario: backoff cap 15 s, retry budget
 * 72 min; the old ~100 s budget is 5 s and the stretch lasts ten times that. A throttled
 * request was refused by SES, so repeating it is safe: each message goes back as a delayed
 * copy, the pods' circuit breakers hold new sends and probe with one, and the pacing halves
 * its rate. Every email is sent once afterwards; none is dead-lettered.
 */
import { pass, sesThrottle } from '../../tools/dev/local/fault-proxy';
import { until } from '../integration/support';
import { ChaosRun, expectReliable, stopRuns } from './harness';

afterEach(stopRuns);

const MESSAGES = 60;
const STRETCH_MS = 50_000;

test('SES throttling every send for 50 s: the breaker holds sends, nothing is lost, duplicated or dead-lettered', async () => {
  let throttling = true;
  let throttled = 0;
  let forwarded = 0;
  const run = await ChaosRun.start({
    order: 8,
    scenario: 'SES throttled for long',
    settings: { maxReceiveCount: 5, retryBudgetSeconds: 72 * 60 },
    env: { RETRY_BASE_SECONDS: '1', RETRY_CAP_SECONDS: '15' },
    ses: () => {
      if (!throttling) {
        forwarded += 1;
        return pass();
      }
      throttled += 1;
      return sesThrottle();
    },
  });
  await run.startPods();
  const stretchEnds = Date.now() + STRETCH_MS;
  await run.publishEmails(MESSAGES);
  await until('the throttling stretch to end', () => Date.now() >= stretchEnds, STRETCH_MS + 5000);
  throttling = false;
  const held = run.decisions('retry').filter((d) => d.errorCode === 'CircuitOpen').length;
  const throttledRetries = run.decisions('retry').filter((d) => d.errorCode === 'Throttled').length;
  const sentDuringStretch = run.decisions('sent').length;

  await run.settle(180_000);
  run.faults.push(
    `every SendEmail answered 429 for ${STRETCH_MS / 1000} s: ${throttled} requests throttled, ${throttledRetries} sends ` +
      `went back as Throttled, ${held} held by the circuit breaker without a request; ${forwarded} requests after it`,
  );
  const result = await run.finish();

  expectReliable(result);
  expect(sentDuringStretch).toBe(0);
  expect(result.emailsSent).toBe(MESSAGES);
  expect(result.duplicates).toBe(0);
  expect(result.deadLettered).toEqual({});
  expect(held).toBeGreaterThan(0);
  expect(run.decisions('retry').every((d) => d.errorClass === 'retryable')).toBe(true);
}, 300_000);
