/**
 * One CLI vocabulary: every command that talks to a pipeline takes the same target options and
 * --json, says how keys are given, and "status" means a key's delivery status only (the old
 * spellings still work, with a warning on stderr).
 */
import { COMMANDS } from '../../../../lib/cli/main';
import { cli, emptyStateDir } from '../../helpers';

// No pipeline here: a command that got past its arguments fails with 1 looking for it.
emptyStateDir('cli-vocabulary-');

test.each(COMMANDS.map((c) => [c.name]))(
  '%s takes --stack, --pipeline, --region and --json, and says so',
  async (name) => {
    const help = await cli(name, '--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    for (const flag of ['--stack NAME', '--pipeline NAME', '--region R', '--json']) expect(help.stdout).toContain(flag);
    expect(help.stdout).toContain('EMAIL_PIPELINE_STACK');
    expect(help.stdout).toContain('EMAIL_PIPELINE_NAME');
    // The word "status" means a key's delivery status: no option is spelled so.
    expect(help.stdout).not.toMatch(/--status\b/);
  },
);

test.each([['status'], ['cancel'], ['resend'], ['dlq']])('%s says how keys are given', async (name) => {
  const help = await cli(name, '--help');
  expect(help.stdout).toMatch(/takes it as\s+its\s+argument/);
  expect(help.stdout).toContain('--key');
});

test('deliveries --outcome; --status still works, with a warning', async () => {
  const now = await cli('deliveries', '--outcome', 'bounced');
  expect(now.code).toBe(1);
  expect(now.stderr).not.toContain('deprecated');
  const old = await cli('deliveries', '--status', 'bounced');
  expect(old.code).toBe(1);
  expect(old.stderr.split('\n')[0]).toBe(
    'email-pipeline: deliveries --status is deprecated: use deliveries --outcome (the old spelling goes in a future major version)',
  );
  expect(old.stderr).toContain('No local pipeline found');
  expect((await cli('deliveries', '--outcome', 'bouncd')).stderr).toContain(
    'unknown outcome "bouncd" (did you mean bounced?)',
  );
  expect((await cli('deliveries')).stderr).toContain('say which outcome: --outcome delayed|bounced|');
  expect((await cli('deliveries', '--outcome', 'bounced', '--status', 'bounced')).code).toBe(2);
  // Sent and delivered keys are not indexed: asking for them is refused with the reason, before any AWS call.
  const sent = await cli('deliveries', '--outcome', 'delivered');
  expect(sent.code).toBe(2);
  expect(sent.stderr).toContain('"delivered" keys are not listed');
});

test('a typo is never pointed at an old spelling', async () => {
  expect((await cli('deliveries', '--stat', 'sent')).stderr).not.toContain('did you mean --status');
  expect((await cli('pause', '--stauts')).stderr).toContain('unknown option --stauts');
  expect((await cli('pause', '--stauts')).stderr).not.toContain('--status?');
  expect((await cli('dlq', 'purge', '--yes-delete')).stderr).not.toContain('--yes-delete-all-messages?');
});

test('the top-level help states the rules once', async () => {
  const help = await cli('--help');
  expect(help.stdout).toContain('Every command takes --json');
  expect(help.stdout).toContain('--key K selects dead letters in dlq and may be repeated');
  expect(help.stdout).toContain('ask first, or take --yes; --dry-run changes nothing');
});
