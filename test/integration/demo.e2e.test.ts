/**
 * `npm run demo` replays the incident and must end with emails sent equal to
 * the unique messages and the poison message in the DLQ (it exits non-zero
 * otherwise).
 */
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { npmScript } from './npm-script';

const DEMO = npmScript('demo');

test('the incident replay ends with one email per unique message and the poison message dead-lettered', () => {
  const demo = spawnSync(DEMO.command, DEMO.args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, DEMO_MESSAGES: '12' },
  });
  expect(demo.stderr).toBe('');
  expect(demo.status).toBe(0);
  expect(demo.stdout).toMatch(/\| unique messages +\| +12 \|/);
  expect(demo.stdout).toMatch(/\| emails sent +\| +12 \|/);
  expect(demo.stdout).toMatch(/\| dead-lettered +\| +1 \|/);
  expect(demo.stdout).toContain('Dead-lettered: InvalidMessage: subject: must not contain CR or LF');
});

test('npm run demo -- --help says what it does (exit 0); an argument is a usage error (exit 2)', () => {
  const run = (...extra: string[]) =>
    spawnSync(DEMO.command, [...DEMO.args, ...extra], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  const help = run('--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^Usage: npm run demo/);
  const wrong = run('--messages', '5');
  expect(wrong.status).toBe(2);
  expect(wrong.stderr).toContain('npm run demo: unexpected argument "--messages"');
});
