/**
 * Commands that delete or move messages or records ask first (y/N) or take --yes, and say what
 * they would do with --dry-run; with no terminal to ask on and neither flag, a usage error (exit
 * 2) before any AWS call.
 */
import { confirmed, consent } from '../../../../lib/cli/confirm';
import { OperationError, UsageError } from '../../../../lib/cli/errors';
import { run } from '../../../../lib/cli/main';
import { printableIo } from '../../../../lib/cli/printable';

const quiet = { out: () => undefined, err: () => undefined };

test('--yes goes ahead, --dry-run only says, a terminal is asked; nothing to ask on is a usage error', () => {
  expect(consent({ yes: true }, 'x', 'u', {})).toBe('yes');
  expect(consent({ 'dry-run': true }, 'x', 'u', {})).toBe('dry-run');
  expect(consent({}, 'x', 'u', { interactive: true })).toBe('ask');
  expect(() => consent({}, 'dlq purge deletes every message', 'u', {})).toThrow(
    new UsageError(
      'dlq purge deletes every message: with no terminal to ask on, add --yes to go ahead, or --dry-run to see what it would do',
    ),
  );
  expect(() => consent({ yes: true, 'dry-run': true }, 'x', 'u', { interactive: true })).toThrow(
    '--yes and --dry-run do not go together',
  );
});

test('only y or yes goes ahead; anything else changes nothing (exit 1)', async () => {
  const asked: string[] = [];
  const answering = (answer: string) => ({
    ...quiet,
    interactive: true,
    ask: async (question: string) => {
      asked.push(question);
      return answer;
    },
  });
  await expect(confirmed('ask', 'Delete 3 message(s)?', answering('y'))).resolves.toBeUndefined();
  await expect(confirmed('ask', 'Delete?', answering(' YES '))).resolves.toBeUndefined();
  for (const answer of ['', 'n', 'no', 'yy', 'sure']) {
    await expect(confirmed('ask', 'Delete?', answering(answer))).rejects.toThrow(
      new OperationError('Not confirmed: nothing was changed.'),
    );
  }
  expect(asked[0]).toBe('Delete 3 message(s)? [y/N] ');
  // --yes and --dry-run never ask.
  await expect(confirmed('yes', 'Delete?', answering('n'))).resolves.toBeUndefined();
  await expect(confirmed('dry-run', 'Delete?', answering('n'))).resolves.toBeUndefined();
  expect(asked).toHaveLength(7);
});

test('the question reaches the terminal printable, as every line does', async () => {
  const asked: string[] = [];
  const io = printableIo({
    ...quiet,
    interactive: true,
    ask: async (question) => {
      asked.push(question);
      return 'y';
    },
  });
  expect(io.interactive).toBe(true);
  await confirmed('ask', 'Delete key \u001b[2Jx?', io);
  expect(asked).toEqual(['Delete key \\u001b[2Jx? [y/N] ']);
});

test.each([
  [['resend', 'order-42', '--reason', 'fixed'], "resend deletes the key's completed send record"],
  [['dlq', 'purge', '--stack', 'S'], 'dlq purge deletes every message in the DLQ for good'],
  [['dlq', 'redrive'], 'dlq redrive moves messages back to their queue'],
  [['dlq', 'delete', '--key', 'order-42'], 'dlq delete deletes messages for good'],
])('%j without a terminal, --yes or --dry-run: exit 2', async (argv, said) => {
  const err: string[] = [];
  expect(await run(argv, { out: () => undefined, err: (l) => err.push(l) })).toBe(2);
  expect(err[0]).toContain(said);
  expect(err[0]).toContain('add --yes to go ahead, or --dry-run');
});
