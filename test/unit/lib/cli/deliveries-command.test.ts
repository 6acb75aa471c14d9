/** `email-pipeline deliveries`: the arguments it refuses, before it looks for a pipeline. */
import { cli } from '../../helpers';

test.each([
  [[], 'say which outcome: --outcome'],
  [['--outcome', 'delivered'], '"delivered" keys are not listed'],
  [['--outcome', 'sent'], '"sent" keys are not listed'],
  [['--outcome', 'bounce'], 'unknown outcome "bounce"'],
  [['--outcome', 'bounced', 'extra'], 'unexpected argument "extra"'],
  [['--outcome', 'bounced', '--status', 'bounced'], 'give --outcome only'],
  [['--outcome', 'bounced', '--since', 'yesterday'], '--since takes an ISO date or time or an age like 2h'],
  [['--outcome', 'bounced', '--max', '0'], '--max must be a whole number of at least 1'],
])('deliveries %j: exit 2, saying "%s", nothing on stdout', async (args, reason) => {
  const ran = await cli('deliveries', ...args);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(reason);
  expect(ran.stdout).toBe('');
});

test('an unknown outcome is answered with the closest known one', async () => {
  expect((await cli('deliveries', '--outcome', 'bounce')).stderr).toContain('bounced');
});
