/** `email-pipeline deliveries`: the arguments it refuses, before it looks for a pipeline, and a key's line. */
import { line } from '../../../../lib/cli/deliveries-command';
import { cli } from '../../helpers';

const at = (n: number) => new Date(Date.UTC(2026, 11, 3, 9, 0, n)).toISOString();

test.each([
  [[], 'say which outcome: --outcome'],
  [['--outcome', 'delivered'], '"delivered" keys are not listed'],
  [['--outcome', 'sent'], '"sent" keys are not listed'],
  [['--outcome', 'bounce'], 'unknown outcome "bounce"'],
  [['--outcome', 'bounced', 'extra'], 'unexpected argument "extra"'],
  [['--outcome', 'bounced', '--status', 'bounced'], 'give --outcome only'],
  [['--outcome', 'bounced', '--since', 'yesterday'], '--since takes an ISO date or time or an age like 2h'],
  [['--outcome', 'bounced', '--max', '0'], '--max must be a whole number of at least 1'],
  [['--outcome', 'bounced', '--team', 'Billing'], '"Billing" cannot be a team'],
  [['--outcome', 'bounced', '--team', 'a#b'], '"a#b" cannot be a team'],
])('deliveries %j: exit 2, saying "%s", nothing on stdout', async (args, reason) => {
  const ran = await cli('deliveries', ...args);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(reason);
  expect(ran.stdout).toBe('');
});

test('an unknown outcome is answered with the closest known one', async () => {
  expect((await cli('deliveries', '--outcome', 'bounce')).stderr).toContain('bounced');
});

test("a line shows a team's key as the team wrote it, and its team unless --team named it", () => {
  const d = { key: 'sha256-aa', status: 'bounced' as const, updatedAt: at(2) };
  expect(line(d, undefined)).toBe(`${at(2)}  sha256-aa`);
  expect(line({ ...d, team: 'billing', teamKey: 'order-1' }, undefined)).toBe(`${at(2)}  order-1  team billing`);
  expect(line({ ...d, team: 'billing', teamKey: 'order-1' }, 'billing')).toBe(`${at(2)}  order-1`);
  expect(line({ ...d, team: 'billing' }, 'billing')).toBe(`${at(2)}  sha256-aa`);
});
