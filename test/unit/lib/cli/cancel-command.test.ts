/**
 * `email-pipeline cancel` and `publish --send-at` on the command line: usage errors exit 2 with the
 * short usage, before any pipeline is looked for; without a pipeline, cancel fails with 1.
 */
import { cli, emptyStateDir } from '../../helpers';

emptyStateDir('cli-cancel-');

test('cancel is a command of the packaged CLI, listed in its help', async () => {
  expect((await cli('--help')).stdout).toMatch(/^\s+cancel\s+cancel a key not yet sent/m);
});

test('cancel without a key, or with two, is a usage error (exit 2)', async () => {
  expect(await cli('cancel')).toMatchObject({ code: 2, stderr: expect.stringContaining('say which key') });
  expect(await cli('cancel', 'a', 'b')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('one key at a time'),
  });
});

test('cancel of a key that cannot be a dedupe key is a usage error naming the rule', async () => {
  const ran = await cli('cancel', ' order-42');
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('cannot be a dedupe key: it must not be empty or start or end with spaces');
});

test('cancel --team with a name that cannot be a team is a usage error naming the rule', async () => {
  const ran = await cli('cancel', '--team', 'Billing', 'order-42');
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('"Billing" cannot be a team: a team name is 1 to 32 lowercase letters');
  expect((await cli('cancel', '--help')).stdout).toContain('--team NAME');
});

test('cancel without a local pipeline fails with 1 and says how to start one', async () => {
  const ran = await cli('cancel', 'order-42');
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain('No local pipeline found');
});

test('publish --send-at that is not RFC 3339 is a usage error naming --send-at', async () => {
  const ran = await cli(
    'publish',
    '--to',
    'ada@example.com',
    '--subject',
    'Hi',
    '--text',
    'x',
    '--send-at',
    'tomorrow',
  );
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('--send-at: must be an RFC 3339 date-time with an offset');
});

test('publish --send-at too far ahead is refused before publishing', async () => {
  const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
  const ran = await cli('publish', '--to', 'ada@example.com', '--subject', 'Hi', '--text', 'x', '--send-at', later);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('--send-at: must be at most 86400 s after');
});
