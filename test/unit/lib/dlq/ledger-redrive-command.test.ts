/** dlq redrive --queue ledger: its arguments (--code, --key, --max, --rate refused with exit 2) and its help. */
import { run } from '../../../../lib/cli/main';
import { capture } from '../../helpers';

describe('arguments', () => {
  test.each([
    [['--code', 'InvalidJson'], '--code does not go with --queue ledger: the ledger DLQ holds SES events, not sends'],
    [['--key', 'order-42'], '--key does not go with --queue ledger: the ledger DLQ holds SES events, not sends'],
    [['--max', '3'], '--max does not go with --queue ledger'],
    [['--rate', '3'], '--rate does not go with --queue ledger'],
  ])('dlq redrive --queue ledger %s is refused with exit 2 and one line', async (extra, reason) => {
    const c = capture();
    expect(await run(['dlq', 'redrive', '--queue', 'ledger', ...extra], c.io)).toBe(2);
    expect(c.err[0]).toContain(reason);
    expect(c.out).toEqual([]);
  });

  test('--stall goes only with the ledger queue, and is a whole number', async () => {
    const send = capture();
    expect(await run(['dlq', 'redrive', '--stall', '5'], send.io)).toBe(2);
    expect(send.err[0]).toContain('--stall goes with dlq redrive --queue ledger');
    const bad = capture();
    expect(await run(['dlq', 'redrive', '--queue', 'ledger', '--stall', 'soon'], bad.io)).toBe(2);
    expect(bad.err[0]).toContain('--stall must be a whole number');
  });

  test('the usage says how the ledger DLQ is redriven', async () => {
    const c = capture();
    expect(await run(['dlq', '--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toContain('redrive --queue ledger never sends to the ledger');
  });
});
