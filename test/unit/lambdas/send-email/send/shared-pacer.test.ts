/**
 * The shared pacer (send/shared-pacer.ts), the policy and its driver together, on the store in memory
 * and a virtual clock: the whole rate used by one container or many and never more than SES's bucket
 * allows, to the end of a burst; the high lane's reserve; deadlines; the fallback to the static share
 * when the table cannot be reached; and implausible lane items repaired while sends go on.
 */
import {
  BORROW_PERIOD_MS,
  IMPLAUSIBLE_FALLBACK_MS,
  maxLeaseAheadMs,
  THROTTLE_PAUSE_MS,
} from '../../../../../lambdas/send-email/send/pacing-policy';
import { laneRates, type LaneId } from '../../../../../lambdas/send-email/send/lane-rates';
import { SharedPacer } from '../../../../../lambdas/send-email/send/shared-pacer';
import type { SlotStore } from '../../../../../lambdas/send-email/send/slot-store';
import { SendPacer } from '../../../../../lambdas/send-email/send/token-bucket';
import { FakeSlotStore as FakeStore, VirtualClock } from '../../../helpers';

/** SES's bucket: one second of the rate, refilled at the rate; counts what it would throttle. */
function sesBucket(rate: number) {
  let tokens = rate;
  let at = 0;
  let throttled = 0;
  return {
    arrive(t: number): void {
      tokens = Math.min(rate, tokens + ((t - at) / 1000) * rate);
      at = t;
      if (tokens >= 1) tokens -= 1;
      else throttled += 1;
    },
    throttled: () => throttled,
  };
}

function pacer(store: SlotStore, clock: VirtualClock, maxSendRate: number, highShare = 20, maxConcurrency = 10) {
  return new SharedPacer({
    store,
    maxSendRate,
    highShare,
    fallback: SendPacer.forSettings({ maxSendRate, maxConcurrency }, clock),
    now: clock.now,
    sleep: clock.sleep,
  });
}

/** A container working through batches of 10 single-recipient sends, as the event source feeds it. */
async function container(clock: VirtualClock, p: SharedPacer, lane: LaneId, emails: number, sentAt: number[]) {
  for (let done = 0; done < emails; done += 10) {
    const batch = Math.min(10, emails - done);
    await Promise.all(
      Array.from({ length: batch }, async () => {
        if (await p.acquire(lane, 1, clock.now() + 24_000)) sentAt.push(clock.now());
      }),
    );
    await clock.sleep(60); // delete, receive, claims: the gap between two batches
  }
}

test.each([1, 2, 10])(
  '%i containers together use at least 90 % of the rate and SES throttles none',
  async (containers) => {
    const clock = new VirtualClock();
    const store = new FakeStore();
    const sentAt: number[] = [];
    const emails = 420;
    const start = clock.now();
    const work = Promise.all(
      Array.from({ length: containers }, (_, i) =>
        container(
          clock,
          pacer(store, clock, 14),
          'normal',
          Math.floor(emails / containers) + (i < emails % containers ? 1 : 0),
          sentAt,
        ),
      ),
    );
    await clock.run(work);
    expect(sentAt).toHaveLength(emails);
    const seconds = (Math.max(...sentAt) - start) / 1000;
    expect(emails / seconds / 14).toBeGreaterThanOrEqual(0.9);
    const ses = sesBucket(14);
    for (const t of [...sentAt].sort((a, b) => a - b)) ses.arrive(t);
    expect(ses.throttled()).toBe(0);
    // A lease serves several sends: well under one write per email.
    expect(store.writes / emails).toBeLessThan(containers === 10 ? 2 : 0.7);
  },
);

/** A container taking batches of 10 from one queue until it is empty, as an event source mapping feeds it. */
async function puller(clock: VirtualClock, p: SharedPacer, queue: { left: number }, sentAt: number[]) {
  while (queue.left > 0) {
    const batch = Math.min(10, queue.left);
    queue.left -= batch;
    await Promise.all(
      Array.from({ length: batch }, async () => {
        if (await p.acquire('normal', 1, clock.now() + 24_000)) sentAt.push(clock.now());
        else queue.left += 1;
      }),
    );
    await clock.sleep(60);
  }
}

test.each([
  [1, 14],
  [2, 14],
  [10, 14],
  [1, 10],
  [2, 10],
])('%i containers sharing one queue keep the rate (%i/s) to the end of the burst', async (containers, rate) => {
  const clock = new VirtualClock();
  const store = new FakeStore();
  const sentAt: number[] = [];
  const queue = { left: 400 };
  await clock.run(
    Promise.all(
      Array.from({ length: containers }, (_, i) =>
        clock.sleep(i * 37).then(() => puller(clock, pacer(store, clock, rate), queue, sentAt)),
      ),
    ),
  );
  const sorted = [...sentAt].sort((a, b) => a - b);
  expect(sorted).toHaveLength(400);
  const rateOf = (from: number) =>
    (sorted.length - 1 - from) / ((sorted[sorted.length - 1]! - sorted[from]!) / 1000) / rate;
  // The whole burst, and its last 40 emails: sends left holding slots far ahead (before the lease
  // horizon) left 0.90 and 0.69 with ten containers, their slots unused when the queue ran dry.
  expect(rateOf(0)).toBeGreaterThanOrEqual(0.92);
  expect(rateOf(360)).toBeGreaterThanOrEqual(0.75);
  const ses = sesBucket(rate);
  for (const t of sorted) ses.arrive(t);
  expect(ses.throttled()).toBe(0);
});

test('a high-priority send overtakes a bulk backlog: it goes within the borrow period', async () => {
  const clock = new VirtualClock();
  const store = new FakeStore();
  const bulk: number[] = [];
  const pacers = [pacer(store, clock, 14), pacer(store, clock, 14)];
  const work = Promise.all(pacers.map((p) => container(clock, p, 'normal', 150, bulk)));
  const waits: number[] = [];
  const high = (async () => {
    for (let i = 0; i < 8; i += 1) {
      await clock.sleep(1500);
      const asked = clock.now();
      expect(await pacers[i % 2]!.acquire('high', 1, asked + 24_000)).toBe(true);
      waits.push(clock.now() - asked);
    }
  })();
  await clock.run(Promise.all([work, high]));
  expect(waits).toHaveLength(8);
  expect(Math.max(...waits)).toBeLessThanOrEqual(BORROW_PERIOD_MS + 1000 / laneRates(14, 20).high);
  // The bulk backlog was still draining: the high sends did not wait for it.
  expect(bulk.length).toBe(300);
});

test('when the table cannot be reached, a container paces to its static share instead', async () => {
  const clock = new VirtualClock();
  const store = new FakeStore();
  store.failing = true;
  const errors: unknown[] = [];
  const p = new SharedPacer({
    store,
    maxSendRate: 20,
    highShare: 20,
    fallback: new SendPacer({ ratePerSecond: 2, now: clock.now, sleep: clock.sleep }),
    now: clock.now,
    sleep: clock.sleep,
    onFallback: (error) => errors.push(error),
  });
  const sentAt: number[] = [];
  const start = clock.now();
  await clock.run(container(clock, p, 'normal', 20, sentAt));
  expect(sentAt).toHaveLength(20);
  expect(errors.length).toBeGreaterThanOrEqual(1);
  // 2 per second: about 9 s for 20 after the first bucket of 2.
  expect(Math.max(...sentAt) - start).toBeGreaterThanOrEqual(8000);
});

test('a send whose deadline has passed still goes if its slot comes at once, as from a static bucket with tokens', async () => {
  const clock = new VirtualClock();
  const p = pacer(new FakeStore(), clock, 14);
  let admitted: boolean | undefined;
  await clock.run(
    p.acquire('normal', 1, clock.now() - 100).then((ok) => {
      admitted = ok;
    }),
  );
  expect(admitted).toBe(true);
});

test('a send that cannot get a slot before its deadline gives up, with nothing sent', async () => {
  const clock = new VirtualClock();
  const store = new FakeStore();
  // Both lanes leased 12 s ahead: busy, yet within what leases reach (maxLeaseAheadMs), so not repaired.
  store.next.set('normal', clock.now() + 12_000);
  store.next.set('high', clock.now() + 12_000);
  const p = pacer(store, clock, 14);
  let admitted: boolean | undefined;
  await clock.run(
    p.acquire('normal', 1, clock.now() + 2000).then((ok) => {
      admitted = ok;
    }),
  );
  expect(admitted).toBe(false);
});

test("a throttle pauses the container's sends for THROTTLE_PAUSE_MS, and its lanes' RecipientsPaced count what went", async () => {
  const clock = new VirtualClock();
  const store = new FakeStore();
  let writes = 0;
  const p = new SharedPacer({
    store,
    maxSendRate: 14,
    highShare: 20,
    fallback: SendPacer.forSettings({ maxSendRate: 14, maxConcurrency: 10 }, clock),
    now: clock.now,
    sleep: clock.sleep,
    onWrites: (n) => (writes += n),
  });
  const sentAt: number[] = [];
  await clock.run(container(clock, p, 'normal', 10, sentAt));
  const throttledAt = clock.now();
  p.lane('normal').onThrottle();
  await clock.run(container(clock, p, 'high', 3, sentAt));
  expect(sentAt).toHaveLength(13);
  expect(Math.min(...sentAt.slice(10))).toBeGreaterThanOrEqual(throttledAt + THROTTLE_PAUSE_MS);
  expect(p.takePaced()).toEqual({ normal: 10, high: 3 });
  expect(p.takePaced()).toEqual({ normal: 0, high: 0 });
  // Every write the leases made is reported (the RateLeaseWrites metric).
  expect(writes).toBe(store.writes);
  expect(writes).toBeGreaterThan(0);
});

describe('a lease that heals', () => {
  /** A slot in the year 33658: what a corrupted item held in the probe. */
  const YEAR_33658 = Date.UTC(33658, 0, 1);

  test('both lanes at a slot in the year 33658: the real pacer repairs them and every send proceeds', async () => {
    const clock = new VirtualClock();
    const store = new FakeStore();
    store.next.set('normal', YEAR_33658);
    store.next.set('high', YEAR_33658);
    const found: { lane: LaneId; repaired: boolean }[] = [];
    const p = new SharedPacer({
      store,
      maxSendRate: 14,
      highShare: 20,
      fallback: SendPacer.forSettings({ maxSendRate: 14, maxConcurrency: 10 }, clock),
      now: clock.now,
      sleep: clock.sleep,
      onImplausible: (lane, _found, repaired) => found.push({ lane, repaired }),
    });
    const sentAt: number[] = [];
    const start = clock.now();
    await clock.run(Promise.all([container(clock, p, 'normal', 10, sentAt), container(clock, p, 'high', 10, sentAt)]));
    expect(sentAt).toHaveLength(20);
    expect(Math.max(...sentAt) - start).toBeLessThan(5000);
    expect(
      found
        .filter((f) => f.repaired)
        .map((f) => f.lane)
        .sort(),
    ).toEqual(['high', 'normal']);
    for (const lane of ['normal', 'high'] as const) {
      expect(store.next.get(lane)).toBeLessThanOrEqual(clock.now() + maxLeaseAheadMs(1000 / laneRates(14, 20)[lane]));
    }
  });

  test('an item that cannot be repaired (written again and again): the container paces to its static share', async () => {
    const clock = new VirtualClock();
    const store = new FakeStore();
    store.next.set('normal', YEAR_33658);
    store.next.set('high', YEAR_33658);
    // Whatever repairs it, the item is far ahead again before the next write.
    store.repair = async (lane) => {
      store.writes += 1;
      store.next.set(lane, YEAR_33658 + store.writes);
      return { ok: false, next: YEAR_33658 + store.writes, found: YEAR_33658 + store.writes };
    };
    const found: boolean[] = [];
    const p = new SharedPacer({
      store,
      maxSendRate: 20,
      highShare: 20,
      fallback: new SendPacer({ ratePerSecond: 2, now: clock.now, sleep: clock.sleep }),
      now: clock.now,
      sleep: clock.sleep,
      onImplausible: (_lane, _found, repaired) => found.push(repaired),
    });
    const sentAt: number[] = [];
    const start = clock.now();
    await clock.run(container(clock, p, 'normal', 20, sentAt));
    expect(sentAt).toHaveLength(20);
    expect(found.length).toBeGreaterThanOrEqual(1);
    expect(found.every((repaired) => !repaired)).toBe(true);
    // The static share, 2 per second: about 9 s for 20 after the first bucket of 2; never faster.
    expect(Math.max(...sentAt) - start).toBeGreaterThanOrEqual(8000);
    expect(IMPLAUSIBLE_FALLBACK_MS).toBeLessThanOrEqual(5000);
  });
});

describe('teams: a lane each, at its share of the rate', () => {
  function teamPacer(
    store: SlotStore,
    clock: VirtualClock,
    teamShares: Record<string, number>,
    highShare = 20,
    highTeams: string[] = [],
  ) {
    return new SharedPacer({
      store,
      maxSendRate: 14,
      highShare,
      teamShares,
      highTeams,
      fallback: SendPacer.forSettings({ maxSendRate: 14, maxConcurrency: 10 }, clock),
      now: clock.now,
      sleep: clock.sleep,
    });
  }

  /** A container taking batches of 10 of `lane`'s sends (of `team`'s mail) from its queue until it is empty. */
  async function teamPuller(
    clock: VirtualClock,
    p: SharedPacer,
    lane: LaneId,
    queue: { left: number },
    sentAt: number[],
    team?: string,
  ) {
    while (queue.left > 0) {
      const batch = Math.min(10, queue.left);
      queue.left -= batch;
      await Promise.all(
        Array.from({ length: batch }, async () => {
          if (await p.lane(lane).acquire(1, clock.now() + 24_000, team)) sentAt.push(clock.now());
          else queue.left += 1;
        }),
      );
      await clock.sleep(60);
    }
  }

  /** Both teams' sends while both had mail waiting: up to the moment the first queue ran dry. */
  async function bothBusy(
    shares: Record<string, number>,
    containers: Record<string, number>,
    highShare: number,
    options: { readonly highTeams?: string[]; readonly securityHigh?: number } = {},
  ) {
    const clock = new VirtualClock();
    const store = new FakeStore();
    const sent: Record<string, number[]> = { billing: [], security: [], securityHigh: [] };
    const queues: Record<string, { left: number }> = {
      billing: { left: 400 },
      security: { left: 400 },
      securityHigh: { left: options.securityHigh ?? 0 },
    };
    const laneOf = (queue: string): LaneId => (queue === 'securityHigh' ? 'high' : `team:${queue}`);
    let firstDry = Infinity;
    const work = Object.keys(queues).flatMap((queue) =>
      Array.from({ length: queues[queue]!.left > 0 ? (containers[queue] ?? 1) : 0 }, (_, i) =>
        clock
          .sleep(i * 29)
          .then(() =>
            teamPuller(
              clock,
              teamPacer(store, clock, shares, highShare, options.highTeams),
              laneOf(queue),
              queues[queue]!,
              sent[queue]!,
              queue === 'billing' ? 'billing' : 'security',
            ),
          )
          .then(() => {
            firstDry = Math.min(firstDry, clock.now());
          }),
      ),
    );
    await clock.run(Promise.all(work));
    const before = (team: string) => sent[team]!.filter((t) => t < firstDry - 1000).length;
    const all = [...sent.billing!, ...sent.security!, ...sent.securityHigh!].sort((a, b) => a - b);
    const ses = sesBucket(14);
    for (const t of all) ses.arrive(t);
    return {
      billing: before('billing'),
      security: before('security') + before('securityHigh'),
      throttled: ses.throttled(),
      all,
      store,
    };
  }

  test.each([[{ billing: 1, security: 1 }], [{ billing: 1, security: 4 }], [{ billing: 3, security: 2 }]])(
    'shares 90/10 with containers %j: billing gets 0.9 of the rate while both wait, whatever the containers',
    async (containers) => {
      // No high reserve: the two teams' lanes are the whole rate.
      const { billing, security, throttled, all } = await bothBusy({ billing: 90, security: 10 }, containers, 0);
      expect(all).toHaveLength(800);
      expect(billing / (billing + security)).toBeGreaterThanOrEqual(0.87);
      expect(billing / (billing + security)).toBeLessThanOrEqual(0.93);
      expect(throttled).toBe(0);
    },
  );

  test("shares 70/30, security's reserve idle: each team keeps its share of the whole rate, security's bulk holding its own reserve", async () => {
    const { billing, security, throttled, store } = await bothBusy(
      { billing: 70, security: 30 },
      { billing: 1, security: 1 },
      20,
      { highTeams: ['security'] },
    );
    const total = billing + security;
    expect(billing / total).toBeGreaterThanOrEqual(0.69);
    expect(security / total).toBeGreaterThanOrEqual(0.27);
    expect(throttled).toBe(0);
    // The reserve was used, by security's bulk mail.
    expect(store.holder.get('high:security')).toBe('team:security');
  });

  test("shares 70/30, security's high-priority mail busy too: it paces within security's share, never billing's", async () => {
    const { billing, security, throttled, store, all } = await bothBusy(
      { billing: 70, security: 30 },
      { billing: 2, security: 1 },
      20,
      { highTeams: ['security'], securityHigh: 100 },
    );
    expect(all).toHaveLength(900);
    // Its share less the start: before, security's high-priority mail took the whole reserve (0.2 of
    // the rate) beside both teams' lanes, cut to 0.8 of it: billing's part was 0.56.
    expect(billing / (billing + security)).toBeGreaterThanOrEqual(0.68);
    expect(throttled).toBe(0);
    expect(store.holder.get('high:security')).toBeDefined();
    expect([...store.next.keys()]).not.toContain('high');
  });

  test('a team alone borrows the idle lanes: a 10 % team with two containers uses at least 0.9 of the rate', async () => {
    const clock = new VirtualClock();
    const store = new FakeStore();
    const sentAt: number[] = [];
    const queue = { left: 400 };
    const shares = { billing: 90, security: 10 };
    await clock.run(
      Promise.all(
        [0, 1].map((i) =>
          clock
            .sleep(i * 37)
            .then(() => teamPuller(clock, teamPacer(store, clock, shares), 'team:security', queue, sentAt)),
        ),
      ),
    );
    const sorted = [...sentAt].sort((a, b) => a - b);
    expect(sorted).toHaveLength(400);
    expect((sorted.length - 1) / ((sorted[sorted.length - 1]! - sorted[0]!) / 1000) / 14).toBeGreaterThanOrEqual(0.9);
    const ses = sesBucket(14);
    for (const t of sorted) ses.arrive(t);
    expect(ses.throttled()).toBe(0);
    // Borrowing asks each idle lane in turn, not every lane at every look.
    expect(store.writes / 400).toBeLessThan(1);
  });

  test("a team without a lane of its own (not in the shares) paces on the normal lane, and RecipientsPaced counts teams' sends as normal", async () => {
    const clock = new VirtualClock();
    const store = new FakeStore();
    const p = teamPacer(store, clock, { billing: 50 });
    const sentAt: number[] = [];
    await clock.run(
      Promise.all([
        teamPuller(clock, p, 'team:other', { left: 5 }, sentAt),
        teamPuller(clock, p, 'team:billing', { left: 5 }, sentAt),
      ]),
    );
    expect(sentAt).toHaveLength(10);
    expect(p.takePaced()).toEqual({ normal: 10, high: 0 });
    expect([...store.next.keys()]).not.toContain('team:other');
    expect([...store.next.keys()]).toContain('team:billing');
  });
});
