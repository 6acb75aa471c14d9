/**
 * The rate lease's algorithm (send/rate-lease.ts) on the store in memory: a lane's first lease, the
 * next, a restart after a pause, a lane taken beyond what the sends can use, and the repair of an
 * item no lease could have written.
 */
import { maxLeaseAheadMs } from '../../../../../lambdas/send-email/send/pacing-policy';
import { leaseSlots } from '../../../../../lambdas/send-email/send/rate-lease';
import { FakeSlotStore as FakeStore } from '../../../helpers';

test('the first lease of an idle lane starts at now; the next continues where it ended, one write each', async () => {
  const store = new FakeStore();
  const first = await leaseSlots(store, {
    lane: 'normal',
    count: 4,
    intervalMs: 100,
    now: 1000,
    lagMs: 500,
    latestStart: 9000,
    maxAheadMs: 60_000,
  });
  expect(first.slots).toEqual([1000, 1100, 1200, 1300]);
  expect(first.next).toBe(1400);
  expect(first.writes).toBe(2); // a failed ADD on no item, then the SET
  const second = await leaseSlots(store, {
    lane: 'normal',
    count: 2,
    intervalMs: 100,
    now: 1010,
    lagMs: 500,
    latestStart: 9000,
    maxAheadMs: 60_000,
  });
  expect(second).toEqual({ slots: [1400, 1500], next: 1600, writes: 1 });
});

test('a lane idle for longer than the lag starts again from now: stale slots are never handed out', async () => {
  const store = new FakeStore();
  store.next.set('normal', 1000);
  const lease = await leaseSlots(store, {
    lane: 'normal',
    count: 1,
    intervalMs: 100,
    now: 5000,
    lagMs: 500,
    latestStart: 9000,
    maxAheadMs: 60_000,
  });
  expect(lease.slots).toEqual([5000]);
});

test('a lane leased beyond what the sends could use answers how far it is taken, with no slot', async () => {
  const store = new FakeStore();
  store.next.set('normal', 30_000);
  const lease = await leaseSlots(store, {
    lane: 'normal',
    count: 1,
    intervalMs: 100,
    now: 1000,
    lagMs: 500,
    latestStart: 20_000,
    maxAheadMs: 60_000,
  });
  expect(lease).toEqual({ slots: [], busyUntil: 30_000, writes: 1 });
});

describe('a lease that heals', () => {
  /** A slot in the year 33658: what a corrupted item held in the probe. */
  const YEAR_33658 = Date.UTC(33658, 0, 1);
  const request = {
    lane: 'normal' as const,
    count: 2,
    intervalMs: 100,
    now: 1_000_000,
    lagMs: 500,
    latestStart: 1_000_500,
    maxAheadMs: maxLeaseAheadMs(100),
  };

  test.each([
    ['a slot in the year 33658', YEAR_33658, /ms ahead/],
    ['a slot just beyond what a lease reaches', 1_000_000 + maxLeaseAheadMs(100) + 1, /ms ahead/],
    ['a value below zero', -5, /below zero/],
    ['a string', 'soon', /not a number: "soon"/],
    ['an object (a wrong type)', { S: '1000000' }, /not a number/],
    ['infinity', Infinity, /not a finite number/],
    ['NaN', NaN, /not a finite number/],
  ])('an item holding %s is replaced at once and the lease gets its slots from now', async (_, value, reason) => {
    const store = new FakeStore();
    store.next.set('normal', value);
    const lease = await leaseSlots(store, request);
    expect(lease).toEqual({
      slots: [1_000_000, 1_000_100],
      next: 1_000_200,
      writes: 2,
      implausible: expect.stringMatching(reason) as unknown as string,
      repaired: true,
    });
    expect(store.next.get('normal')).toBe(1_000_200);
  });

  test('a lane busy within what leases reach is not touched: the lease waits for it', async () => {
    const store = new FakeStore();
    const busy = 1_000_000 + maxLeaseAheadMs(100) - 1;
    store.next.set('normal', busy);
    expect(await leaseSlots(store, request)).toEqual({ slots: [], busyUntil: busy, writes: 1 });
    expect(store.repairs).toBe(0);
  });

  test('the repair replaces only the value read: one another container repaired first is leased from', async () => {
    const store = new FakeStore();
    store.next.set('normal', YEAR_33658);
    // Between this lease's read and its repair, another container repairs the item and leases.
    const original = store.repair.bind(store);
    store.repair = async (lane, found, value) => {
      store.next.set('normal', 1_000_050);
      store.repair = original;
      return original(lane, found, value);
    };
    const lease = await leaseSlots(store, request);
    expect(lease.repaired).toBe(false);
    expect(lease.slots).toEqual([1_000_050, 1_000_150]); // after the other container's, not over them
    expect(store.next.get('normal')).toBe(1_000_250);
  });
});
