/**
 * dlq redrive --queue ledger: its arguments (--code, --key, --max, --rate refused with exit 2), its
 * help, and --stop (a real flag file locally; the SQS depth read over a stub of the command's shape).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { dlqOptions } from '../../../../lib/dlq/command';
import { stopLedgerRedrive } from '../../../../lib/dlq/ledger-redrive-command';
import { run } from '../../../../lib/cli/main';
import type { Target } from '../../../../lib/cli/target';
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

describe('--stop: the mapping a killed redrive left on', () => {
  test('goes with --queue ledger only, and with nothing that starts a redrive', async () => {
    const send = capture();
    expect(await run(['dlq', 'redrive', '--stop'], send.io)).toBe(2);
    expect(send.err[0]).toContain('--stop goes with dlq redrive --queue ledger');
    for (const extra of [['--stall', '5'], ['--yes'], ['--dry-run']]) {
      const c = capture();
      expect(await run(['dlq', 'redrive', '--queue', 'ledger', '--stop', ...extra], c.io)).toBe(2);
      expect(c.err[0]).toContain(`${extra[0]} does not go with --stop`);
    }
  });

  test('needs no --yes: with no terminal to ask on, it is not refused as a change to confirm', () => {
    const checked = dlqOptions(['redrive', '--queue', 'ledger', '--stop'], { ...capture().io, interactive: false });
    expect(checked?.options).toMatchObject({ queue: 'ledger', stop: true });
    expect(checked?.options.mode).toBeUndefined();
  });

  /** A local target whose switch is the flag file `flag`, and an SQS client whose DLQ holds `messages`. */
  function local(flag: string, messages: number) {
    const sent: unknown[] = [];
    const sqs = {
      send: (command: GetQueueAttributesCommand) => {
        sent.push(command.input);
        return Promise.resolve({
          Attributes: { ApproximateNumberOfMessages: String(messages), ApproximateNumberOfMessagesNotVisible: '0' },
        });
      },
    } as unknown as SQSClient;
    const target: Target = {
      description: 'the local pipeline (x)',
      local: true,
      flags: '',
      outputs: { LedgerRedriveFile: flag },
      clients: { sns: {}, sqs: {}, dynamodb: {} },
    } as unknown as Target;
    return { sqs, target, sent };
  }

  test('a switch left on is turned off, and the command says so and what the DLQ holds', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ledger-stop-'));
    try {
      const flag = path.join(dir, 'ledger-dlq-redrive');
      writeFileSync(flag, 'ledger DLQ redrive since 2026-12-03T18:00:00.000Z\n');
      const { sqs, target, sent } = local(flag, 3);
      const c = capture();
      await stopLedgerRedrive(sqs, target, 'https://dlq', 'the ledger DLQ', false, c.io);
      expect(existsSync(flag)).toBe(false);
      expect(c.out).toEqual([
        `Disabled the local ledger consumer's DLQ source (flag file ${flag}) (it was Enabled): the ledger function ` +
          'no longer reads the ledger DLQ. 3 message(s) remain in the ledger DLQ (dlq redrive --queue ledger redrives them).',
      ]);
      expect(sent).toEqual([
        {
          QueueUrl: 'https://dlq',
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        },
      ]);
      // Off already: nothing to do, said as such; --json says the same in one object.
      const again = capture();
      await stopLedgerRedrive(sqs, target, 'https://dlq', 'the ledger DLQ', true, again.io);
      expect(JSON.parse(again.out[0] ?? '')).toEqual({
        action: 'stop',
        queue: 'ledger',
        was: 'Disabled',
        disabled: false,
        messages: 3,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
