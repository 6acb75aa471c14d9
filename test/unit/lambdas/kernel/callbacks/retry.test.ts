/** When a callback is tried again: what each answer means, the backoff, Retry-After and the window. */
import {
  answerResult,
  CALLBACK_RETRY_CAP_SECONDS,
  nextTry,
  retryAfterSeconds,
} from '../../../../../lambdas/kernel/callbacks/retry';

const now = Date.parse('2026-12-04T10:00:00Z');
const plan = { baseSeconds: 30, windowSeconds: 86_400 };

describe('answerResult', () => {
  test.each([200, 201, 204, 299])('%i delivers', (status) =>
    expect(answerResult(status, '', undefined, now).kind).toBe('delivered'),
  );
  test.each([408, 429, 500, 502, 503, 504])('%i is retried', (status) =>
    expect(answerResult(status, '', undefined, now).kind).toBe('retry'),
  );
  test.each([301, 302, 400, 401, 403, 404, 422])('%i is not retried', (status) =>
    expect(answerResult(status, '', undefined, now).kind).toBe('refused'),
  );
  test('410 disables', () => expect(answerResult(410, 'Gone', undefined, now)).toEqual({ kind: 'gone', status: 410 }));
  test('a redirect says it is not followed; the answer is named', () => {
    expect(answerResult(302, 'Found', undefined, now)).toEqual({
      kind: 'refused',
      result: 'HTTP 302 Found: redirects are not followed',
    });
  });
  test('Retry-After is kept with a retried answer', () => {
    expect(answerResult(429, 'Too Many Requests', '120', now)).toEqual({
      kind: 'retry',
      result: 'HTTP 429 Too Many Requests',
      retryAfterSeconds: 120,
    });
  });
});

describe('retryAfterSeconds', () => {
  test('seconds, or an HTTP date from now; nonsense is ignored', () => {
    expect(retryAfterSeconds('30', now)).toBe(30);
    expect(retryAfterSeconds('Fri, 04 Dec 2026 10:05:00 GMT', now)).toBe(300);
    expect(retryAfterSeconds('Fri, 04 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
  });
});

describe('nextTry', () => {
  test('doubles from the base, with jitter between half and all of it', () => {
    expect(nextTry(plan, 1, 0, undefined, () => 0)).toEqual({ retryInSeconds: 15 });
    expect(nextTry(plan, 1, 0, undefined, () => 1)).toEqual({ retryInSeconds: 30 });
    expect(nextTry(plan, 3, 100, undefined, () => 1)).toEqual({ retryInSeconds: 120 });
  });

  test('stops doubling at the cap', () => {
    expect(nextTry(plan, 20, 100, undefined, () => 1)).toEqual({ retryInSeconds: CALLBACK_RETRY_CAP_SECONDS });
  });

  test('waits at least what Retry-After asks, even past the cap', () => {
    expect(nextTry(plan, 1, 0, 600, () => 1)).toEqual({ retryInSeconds: 600 });
    expect(nextTry(plan, 1, 0, 6 * 3600, () => 1)).toEqual({ retryInSeconds: 6 * 3600 });
  });

  test('the last try comes at the end of the window, and then it gives up', () => {
    expect(nextTry(plan, 15, 86_400 - 50, undefined, () => 1)).toEqual({ retryInSeconds: 50 });
    expect(nextTry(plan, 16, 86_400, undefined, () => 1)).toEqual({
      giveUp: 'retry window of 86400 s spent (16 tries)',
    });
  });

  test('over a whole window, tries go on for at least 24 h, however the jitter falls', () => {
    for (const random of [() => 0, () => 0.5, () => 1]) {
      let elapsed = 0;
      let tries = 1;
      for (;;) {
        const next = nextTry(plan, tries, elapsed, undefined, random);
        if ('giveUp' in next) break;
        elapsed += next.retryInSeconds;
        tries += 1;
      }
      expect(elapsed).toBeGreaterThanOrEqual(86_400);
      expect(tries).toBeLessThan(40);
    }
  });
});
