import {
  BACKOFF_CAP_SECONDS,
  backoffSeconds,
  retryDelaySeconds,
  type RetryCause,
} from '../../../../../lambdas/send-email/outcome/backoff';
import { SETTINGS } from '../../../../../lib/settings';

/** Only the required variables: everything else takes its default. */
const lowest = () => 0;
const highest = () => 0.999999;
const middle = () => 0.5;

describe('backoffSeconds', () => {
  test('grows with the receive count', () => {
    const delays = [1, 2, 3, 4, 5].map((receiveCount) => backoffSeconds(2, 300, receiveCount, middle));

    expect(delays).toEqual([2, 3, 6, 12, 24]);
  });

  test('doubles the window with each receive', () => {
    expect(backoffSeconds(10, 1000, 1, highest)).toBe(10);
    expect(backoffSeconds(10, 1000, 2, highest)).toBe(20);
    expect(backoffSeconds(10, 1000, 3, highest)).toBe(40);
  });

  test('is capped', () => {
    expect(backoffSeconds(2, 300, 30, highest)).toBe(300);
  });

  test('jitter stays in the upper half of the window, even at the cap', () => {
    expect(backoffSeconds(2, 300, 30, lowest)).toBe(150);
  });

  test.each([1, 2, 3, 6, 10])('jitter stays within [window/2, window] at receive %s', (receiveCount) => {
    const window = Math.min(300, 2 * 2 ** (receiveCount - 1));
    for (const r of [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999999]) {
      const delay = backoffSeconds(2, 300, receiveCount, () => r);
      expect(delay).toBeGreaterThanOrEqual(Math.floor(window / 2));
      expect(delay).toBeLessThanOrEqual(window);
    }
  });

  test('uses the injected random', () => {
    expect(backoffSeconds(100, 1000, 1, lowest)).toBe(50);
    expect(backoffSeconds(100, 1000, 1, middle)).toBe(75);
  });

  test('is never below 1 second', () => {
    expect(backoffSeconds(1, 300, 1, lowest)).toBeGreaterThanOrEqual(1);
    expect(backoffSeconds(0, 300, 1, lowest)).toBe(1);
  });

  test('treats a missing or zero receive count as the first receive', () => {
    expect(backoffSeconds(8, 300, 0, highest)).toBe(backoffSeconds(8, 300, 1, highest));
  });

  test('the systemic cap is longer than the default retryable and ambiguous cap', () => {
    expect(BACKOFF_CAP_SECONDS.systemic).toBeGreaterThan(SETTINGS.retryCapSeconds.default);
  });

  test('every cap fits the 12-hour SQS visibility timeout limit', () => {
    for (const cap of Object.values(BACKOFF_CAP_SECONDS)) expect(cap).toBeLessThanOrEqual(12 * 60 * 60);
  });
});

describe('retryDelaySeconds', () => {
  const settings = { retryBaseSeconds: 2, retryCapSeconds: 300, systemicRetrySeconds: 300 };
  const cause: RetryCause = { failureClass: 'retryable', code: 'Throttled', failures: 3, requestedSeconds: undefined };

  test('backs off from RETRY_BASE_SECONDS, doubling with the failures', () => {
    expect(retryDelaySeconds(cause, settings, highest)).toBe(backoffSeconds(2, 300, 3, highest));
  });

  test('a systemic failure backs off from SYSTEMIC_RETRY_SECONDS up to the SQS delay limit', () => {
    expect(retryDelaySeconds({ ...cause, failureClass: 'systemic', failures: 2 }, settings, highest)).toBe(600);
    expect(retryDelaySeconds({ ...cause, failureClass: 'systemic', failures: 9 }, settings, highest)).toBe(900);
  });

  test('a send that missed its pacing deadline waits the first backoff, however often it failed', () => {
    expect(retryDelaySeconds({ ...cause, code: 'PacingDeadline', failures: 9 }, settings, highest)).toBe(2);
  });

  test('a delay the failure asks for replaces the backoff, up to the SQS delay limit', () => {
    expect(retryDelaySeconds({ ...cause, requestedSeconds: 42 }, settings, highest)).toBe(42);
    expect(retryDelaySeconds({ ...cause, requestedSeconds: 5000 }, settings, highest)).toBe(900);
  });
});
