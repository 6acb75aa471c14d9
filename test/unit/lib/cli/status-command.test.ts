/** `email-pipeline status KEY`: the arguments it refuses, before it looks for a pipeline. */
import { cli } from '../../helpers';

test.each([
  [[], 'say which key'],
  [['order-42', 'order-43'], 'one key at a time: unexpected argument "order-43"'],
  [[''], 'cannot be a dedupe key'],
  [['x'.repeat(1000)], 'cannot be a dedupe key'],
])('status %j: exit 2, saying "%s", nothing on stdout', async (args, reason) => {
  const ran = await cli('status', ...args);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(reason);
  expect(ran.stdout).toBe('');
});

test('status --help prints its usage on stdout, exit 0', async () => {
  const ran = await cli('status', '--help');
  expect(ran.code).toBe(0);
  expect(ran.stdout).toMatch(/email-pipeline status/);
});

test.each([['Billing'], ['billing#x'], ['']])('status --team %j: exit 2, the team name refused', async (team) => {
  const ran = await cli('status', '--team', team, 'order-42');
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('cannot be a team');
  expect(ran.stdout).toBe('');
});

test('status --help tells of --team', async () => {
  expect((await cli('status', '--help')).stdout).toContain('--team NAME');
});
