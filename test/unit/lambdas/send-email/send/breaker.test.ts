import { CircuitBreaker } from '../../../../../lambdas/send-email/send/breaker';

function breaker() {
  let t = 0;
  const b = new CircuitBreaker({ coolDownMs: 1000, maxCoolDownMs: 4000, now: () => t });
  return { b, advance: (ms: number) => (t += ms) };
}

test("a container's breaker from the settings cools down for the retry base first, up to the retry cap", () => {
  let t = 0;
  const breaker = CircuitBreaker.forSettings({ retryBaseSeconds: 5, retryCapSeconds: 12 }, () => t);
  breaker.onFailure(false);
  expect(breaker.permit()).toEqual({ start: false, retryInMs: 5000 });
  for (let i = 0; i < 3; i += 1) {
    t += 60_000;
    const probe = breaker.permit();
    expect(probe).toEqual({ start: true, probe: true });
    breaker.onFailure(true);
  }
  expect(breaker.permit()).toEqual({ start: false, retryInMs: 12_000 });
});

test('closed: every send may start', () => {
  const { b } = breaker();
  expect(b.permit()).toEqual({ start: true, probe: false });
  expect(b.permit()).toEqual({ start: true, probe: false });
});

test('a failure opens it: no new send starts during the cool-down', () => {
  const { b, advance } = breaker();
  b.onFailure(false);
  expect(b.permit()).toEqual({ start: false, retryInMs: 1000 });
  advance(600);
  expect(b.permit()).toEqual({ start: false, retryInMs: 400 });
});

test('after the cool-down one probe goes; others wait until it answers', () => {
  const { b, advance } = breaker();
  b.onFailure(false);
  advance(1000);
  expect(b.permit()).toEqual({ start: true, probe: true });
  expect(b.permit().start).toBe(false);
  b.onSuccess(true);
  expect(b.current()).toBe('closed');
  expect(b.permit()).toEqual({ start: true, probe: false });
});

test('a failed probe opens it again for twice as long, up to the cap', () => {
  const { b, advance } = breaker();
  b.onFailure(false);
  for (const expected of [2000, 4000, 4000]) {
    advance(10_000);
    expect(b.permit()).toEqual({ start: true, probe: true });
    b.onFailure(true);
    expect(b.permit()).toEqual({ start: false, retryInMs: expected });
  }
});

test('sends already in flight that fail while it is open do not extend the cool-down', () => {
  const { b, advance } = breaker();
  b.onFailure(false);
  advance(500);
  b.onFailure(false);
  expect(b.permit()).toEqual({ start: false, retryInMs: 500 });
});

test('an abandoned probe lets the next one through', () => {
  const { b, advance } = breaker();
  b.onFailure(false);
  advance(1000);
  expect(b.permit().start).toBe(true);
  b.onAbandoned(true);
  expect(b.permit()).toEqual({ start: true, probe: true });
});
