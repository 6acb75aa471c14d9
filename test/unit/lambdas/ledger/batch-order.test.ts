/**
 * The ledger's order within a batch: one key's records one after another, its Send first, then by
 * event time; other keys do not wait; a record that ended in an error still lets the next go.
 */
import { batchOrder, type Ordered } from '../../../../lambdas/ledger/batch-order';

/** Runs every record at once, as the batch processor does, and returns the order they were handled in. */
async function run(records: readonly Ordered[], handle: (r: Ordered) => Promise<void> = async () => {}) {
  const order = batchOrder(records);
  const handled: string[] = [];
  await Promise.allSettled(
    records.map(async (record) => {
      await order.turn(record.id);
      try {
        handled.push(`${record.id}:start`);
        await handle(record);
      } finally {
        handled.push(`${record.id}:end`);
        order.done(record.id);
      }
    }),
  );
  return handled;
}

const event = (id: string, key: string | undefined, type: string, at: string): Ordered => ({
  id,
  key,
  first: type === 'Send',
  at,
});

test("a key's Delivery listed before its Send is handled after the Send has ended", async () => {
  const handled = await run([
    event('d', 'k', 'Delivery', '2026-12-03T10:00:01Z'),
    event('s', 'k', 'Send', '2026-12-03T10:00:00Z'),
  ]);

  expect(handled).toEqual(['s:start', 's:end', 'd:start', 'd:end']);
});

test("the rest of a key's records follow by event time, whatever their order in the batch", async () => {
  const handled = await run([
    event('bounce', 'k', 'Bounce', '2026-12-03T10:00:05Z'),
    event('delay', 'k', 'DeliveryDelay', '2026-12-03T10:00:02Z'),
    event('send', 'k', 'Send', '2026-12-03T10:00:09Z'),
  ]);

  expect(handled.filter((step) => step.endsWith(':start'))).toEqual(['send:start', 'delay:start', 'bounce:start']);
});

test('records of other keys, and records without a key, do not wait', async () => {
  let releaseSend = () => {};
  const sendHeld = new Promise<void>((resolve) => (releaseSend = resolve));
  const started: string[] = [];
  const done = run(
    [
      event('s1', 'a', 'Send', '2026-12-03T10:00:00Z'),
      event('d1', 'a', 'Delivery', '2026-12-03T10:00:01Z'),
      event('s2', 'b', 'Send', '2026-12-03T10:00:00Z'),
      event('x', undefined, 'Send', ''),
    ],
    async (record) => {
      started.push(record.id);
      if (record.id === 's1') await sendHeld;
    },
  );
  // While a's Send is held, b's Send and the keyless record run; a's Delivery does not.
  await new Promise((resolve) => setImmediate(resolve));
  expect(started.sort()).toEqual(['s1', 's2', 'x']);
  releaseSend();
  await done;
  expect(started).toContain('d1');
});

test('a record that failed still lets the next of its key go', async () => {
  const handled = await run(
    [event('s', 'k', 'Send', '2026-12-03T10:00:00Z'), event('d', 'k', 'Delivery', '2026-12-03T10:00:01Z')],
    async (record) => {
      if (record.id === 's') throw new Error('throttled');
    },
  );

  expect(handled).toEqual(['s:start', 's:end', 'd:start', 'd:end']);
});
