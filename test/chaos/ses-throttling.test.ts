/**
 * Scenario 4, SES throttling: every second SendEmail, counted over all three pods, is
 * answered 429 TooManyRequestsException. A throttled send was refused by SES, so it is safe
 * to repeat: the SDK retries it a couple of times, then the queue backs it off. Nothing may
 * be lost, and since SES never accepted a throttled request, nothing may be sent twice.
 */
import { pass, sesThrottle } from '../../tools/dev/local/fault-proxy';
import { ChaosRun, expectReliable, stopRuns } from './harness';

afterEach(stopRuns);

const MESSAGES = 150;

test('SES throttling half the sends delays emails but loses and duplicates none', async () => {
  let throttled = 0;
  const run = await ChaosRun.start({
    order: 4,
    scenario: 'SES throttling',
    ses: (send) => {
      if (send.index % 2 === 0) return pass();
      throttled += 1;
      return sesThrottle();
    },
  });
  await run.publishEmails(MESSAGES, (i) => (i % 3 === 0 ? { key: `receipt-${i}` } : {}));
  await run.startPods();

  await run.settle();
  const retries = run.decisions('retry');
  const queueRetries = retries.filter((d) => d.errorCode === 'Throttled').length;
  // Other retries are the machine's doing, not the scenario's (on a busy machine an SES answer can
  // outlast the request timeout: an ambiguous send, confirmed from its SES event). Counted, not failed.
  const others = retries.filter((d) => d.errorCode !== 'Throttled' && d.errorCode !== 'CircuitOpen');
  run.faults.push(
    `${throttled} of ${2 * throttled} SendEmail requests answered 429; ${queueRetries} sends backed off through the queue` +
      (others.length > 0 ? `; ${others.length} other retries (${others.map((d) => d.errorCode).join(', ')})` : ''),
  );
  const result = await run.finish();

  expectReliable(result);
  expect(result.emailsSent).toBe(MESSAGES);
  expect(result.duplicates).toBe(0);
  expect(throttled).toBeGreaterThanOrEqual(MESSAGES / 2);
  // What the scenario means: a throttle is refused, so never treated as a send of unknown fate.
  const throttleRetries = retries.filter((d) => d.errorCode === 'Throttled' || d.errorCode === 'CircuitOpen');
  expect(throttleRetries.filter((d) => d.errorClass !== 'retryable')).toEqual([]);
}, 180_000);
