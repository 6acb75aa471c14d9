/** The CLI's argument parsing: what a wrong argument says, --help, whole numbers and old spellings. */
import { deprecated, parse, parseCommand, wholeNumber } from '../../../../lib/cli/args';
import { UsageError } from '../../../../lib/cli/errors';
import { capture } from '../../helpers';

const OPTIONS = {
  stack: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  status: { type: 'string' },
} as const;
const USAGE = 'usage: email-pipeline thing [--stack name] [--json]';

function usageError(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError');
}

test('parses values and positionals', () => {
  expect(parse(['order-42', '--stack', 'Mail', '--json'], OPTIONS, USAGE)).toEqual({
    values: { stack: 'Mail', json: true },
    positionals: ['order-42'],
  });
});

test('an unknown option is named, with the closest known one, and carries the usage', () => {
  const error = usageError(() => parse(['--stakc', 'Mail'], OPTIONS, USAGE));
  expect(error.message).toMatch(/^unknown option --stakc/);
  expect(error.message).toContain('--stack');
  expect(error.usage).toBe(USAGE);
});

test('a hidden option is never suggested', () => {
  expect(usageError(() => parse(['--statu'], OPTIONS, USAGE, ['status'])).message).not.toContain('--status');
});

test('an option without its value says so', () => {
  expect(usageError(() => parse(['--stack'], OPTIONS, USAGE)).message).toBe('--stack needs a value');
});

test('--help prints the usage to stdout and returns nothing to run', () => {
  const c = capture();
  expect(parseCommand(['--help'], OPTIONS, USAGE, c.io)).toBeUndefined();
  expect(c.out).toEqual([USAGE]);
  expect(parseCommand(['--json'], OPTIONS, USAGE, c.io)?.values).toEqual({ json: true });
  expect(c.out).toEqual([USAGE]);
});

test.each([
  ['12', 1, 12],
  ['0', 0, 0],
])('wholeNumber %s (at least %i) is %i', (raw, min, value) => {
  expect(wholeNumber('max', raw, min, USAGE)).toBe(value);
});

test('wholeNumber leaves an absent option absent', () => {
  expect(wholeNumber('max', undefined, 1, USAGE)).toBeUndefined();
});

test.each(['0', '-1', '1.5', '3e2', ' 4', 'ten', '99999999999999999999'])(
  'wholeNumber refuses "%s" (at least 1)',
  (raw) => {
    expect(usageError(() => wholeNumber('max', raw, 1, USAGE)).message).toBe(
      `--max must be a whole number of at least 1, got "${raw}"`,
    );
  },
);

test('deprecated warns on stderr, naming the old spelling and what replaces it', () => {
  const c = capture();
  deprecated(c.io, '--status', '--outcome');
  expect(c.out).toEqual([]);
  expect(c.err).toHaveLength(1);
  expect(c.err[0]).toContain('--status is deprecated: use --outcome');
});
