/**
 * The container's byte budget: records wait for room in the order they asked, none fails for it,
 * and an email larger than the whole budget runs alone.
 */
import {
  budgetForMemory,
  budgetFromEnvironment,
  createByteBudget,
  type Release,
} from '../../../../../lambdas/send-email/send/byte-budget';

const MIB = 1024 * 1024;

/** Lets queued promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Starts an acquisition and records when it is granted. */
function track(order: string[], name: string, promise: Promise<Release>): { release: () => Promise<void> } {
  const granted = promise.then((release) => {
    order.push(name);
    return release;
  });
  return { release: async () => (await granted)() };
}

describe('byte budget', () => {
  test('what fits is granted at once', async () => {
    const budget = createByteBudget(100);
    await budget.acquire(40);
    await budget.acquire(60);
    expect(budget.held()).toBe(100);
  });

  test('a request that does not fit waits until enough is released, then runs', async () => {
    const budget = createByteBudget(100);
    const first = await budget.acquire(70);
    const order: string[] = [];
    const second = track(order, 'second', budget.acquire(50));
    await settle();
    expect(order).toEqual([]);
    first();
    await settle();
    expect(order).toEqual(['second']);
    await second.release();
    expect(budget.held()).toBe(0);
  });

  test('waiters are granted in the order they asked, a small one does not pass a large one', async () => {
    const budget = createByteBudget(100);
    const first = await budget.acquire(60);
    const order: string[] = [];
    const large = track(order, 'large', budget.acquire(90));
    const small = track(order, 'small', budget.acquire(10));
    await settle();
    expect(order).toEqual([]);
    first();
    await settle();
    expect(order).toEqual(['large', 'small']);
    await large.release();
    await small.release();
    expect(budget.held()).toBe(0);
  });

  test('one request larger than the whole budget runs alone, and is never refused', async () => {
    const budget = createByteBudget(100);
    const small = await budget.acquire(10);
    const order: string[] = [];
    const huge = track(order, 'huge', budget.acquire(500));
    const after = track(order, 'after', budget.acquire(10));
    await settle();
    expect(order).toEqual([]);
    small();
    await settle();
    expect(order).toEqual(['huge']);
    expect(budget.held()).toBe(100);
    await huge.release();
    await settle();
    expect(order).toEqual(['huge', 'after']);
    await after.release();
  });

  test('a release given twice frees its bytes once', async () => {
    const budget = createByteBudget(100);
    const a = await budget.acquire(50);
    await budget.acquire(50);
    a();
    a();
    expect(budget.held()).toBe(50);
  });

  test('nothing to hold is granted at once, whatever is held', async () => {
    const budget = createByteBudget(100);
    await budget.acquire(100);
    await budget.acquire(0);
    expect(budget.held()).toBe(100);
  });

  test('many concurrent requests all complete, never above the budget', async () => {
    const budget = createByteBudget(25 * MIB * 3);
    let peak = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const release = await budget.acquire(25 * MIB);
        peak = Math.max(peak, budget.held());
        await settle();
        release();
      }),
    );
    expect(peak).toBe(75 * MIB);
    expect(budget.held()).toBe(0);
  });
});

describe('budget from memory', () => {
  test('a 256 MB function holds one largest email at a time', () => {
    expect(Math.floor(budgetForMemory(256) / (25 * MIB))).toBe(1);
  });

  test('a 512 MB function holds three largest emails at a time', () => {
    expect(Math.floor(budgetForMemory(512) / (25 * MIB))).toBe(3);
  });

  test('the memory Lambda states in the environment sets the budget', async () => {
    const budget = budgetFromEnvironment({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256' });
    await budget.acquire(25 * MIB);
    const order: string[] = [];
    track(order, 'second', budget.acquire(25 * MIB));
    await settle();
    expect(order).toEqual([]);
  });
});
