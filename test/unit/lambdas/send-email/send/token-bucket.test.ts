import { containerShare, SendPacer } from '../../../../../lambdas/send-email/send/token-bucket';

/** A clock that only moves when the pacer sleeps. */
function fakeClock() {
  let t = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

test('each container gets an equal share of the pipeline rate, less a little headroom', () => {
  expect(containerShare(14, 10)).toBeCloseTo(1.4 * 0.95);
  expect(containerShare(20, 2)).toBeCloseTo(9.5);
  // All containers together stay under the rate.
  expect(containerShare(20, 7) * 7).toBeLessThan(20);
});

test("a container's pacer from the settings paces to its share of maxSendRate", () => {
  const pacer = SendPacer.forSettings({ maxSendRate: 20, maxConcurrency: 2 }, fakeClock());

  expect(pacer.currentRate()).toBeCloseTo(containerShare(20, 2));
});

test('paces sends to the rate: 50 single-recipient sends at 10/s take about 5 s', async () => {
  const clock = fakeClock();
  const pacer = new SendPacer({ ratePerSecond: 10, ...clock });
  for (let i = 0; i < 50; i += 1) expect(await pacer.acquire(1, Infinity)).toBe(true);
  // The first 10 come from the full bucket; the other 40 at 10/s.
  expect(clock.now()).toBeGreaterThanOrEqual(3900);
  expect(clock.now()).toBeLessThanOrEqual(4100);
});

test('counts recipients, not requests', async () => {
  const clock = fakeClock();
  const pacer = new SendPacer({ ratePerSecond: 10, ...clock });
  for (let i = 0; i < 10; i += 1) await pacer.acquire(5, Infinity);
  // 50 recipients: 10 from the bucket, 40 more at 10/s.
  expect(clock.now()).toBeGreaterThanOrEqual(3900);
});

test('a send that cannot get its turn before the deadline is refused and takes nothing', async () => {
  const clock = fakeClock();
  const pacer = new SendPacer({ ratePerSecond: 1, ...clock });
  expect(await pacer.acquire(1, 10_000)).toBe(true);
  expect(await pacer.acquire(1, 500)).toBe(false);
  expect(clock.now()).toBe(0);
  // The refused send took no token: the next one gets the first token that comes.
  expect(await pacer.acquire(1, 10_000)).toBe(true);
  expect(clock.now()).toBe(1000);
});

test('a throttle halves the rate, which grows back without throttles', async () => {
  const clock = fakeClock();
  const pacer = new SendPacer({ ratePerSecond: 8, ...clock });
  pacer.onThrottle();
  expect(pacer.currentRate()).toBe(4);
  pacer.onThrottle();
  expect(pacer.currentRate()).toBe(2);
  clock.advance(20_000);
  expect(pacer.currentRate()).toBe(8);
});

test('an email with more recipients than the bucket holds still goes, and the debt slows the next', async () => {
  const clock = fakeClock();
  const pacer = new SendPacer({ ratePerSecond: 2, ...clock });
  expect(await pacer.acquire(10, Infinity)).toBe(true);
  expect(await pacer.acquire(1, Infinity)).toBe(true);
  // 10 recipients with 2 in the bucket: 8 in debt, then one more token: 4.5 s.
  expect(clock.now()).toBe(4500);
});
