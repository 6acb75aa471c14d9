/**
 * `email-pipeline publish` on the command line: what is wrong is said in terms of its options,
 * with exit 2 and the short usage, before anything is published or any pipeline is looked for.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { cli, emptyStateDir } from '../../helpers';

// No outputs.json here: a command that got as far as looking for the local pipeline fails with 1.
const stateDir = emptyStateDir('cli-publish-');

const publish = (...args: string[]) => cli('publish', ...args);

const VALID = ['--to', 'ada@example.com', '--subject', 'Hello', '--text', 'Hi'];

test('--help prints the whole usage to stdout and exits 0', async () => {
  const ran = await publish('--help');
  expect(ran).toMatchObject({ code: 0, stderr: '' });
  expect(ran.stdout).toContain('--idempotency-key KEY');
  expect(ran.stdout).toContain('--topic-arn publishes to that topic');
  expect(ran.stdout).toContain('Target: --stack NAME (or EMAIL_PIPELINE_STACK)');
});

test.each([
  ['no --to', ['--subject', 'Hello', '--text', 'Hi'], '--to is required'],
  ['no content', ['--to', 'ada@example.com', '--subject', 'Hello'], 'say what to send: --subject with --text'],
  ['--text without --subject', ['--to', 'ada@example.com', '--text', 'Hi'], '--subject is required with --text'],
  ['--data without --template', [...VALID, '--data', '{}'], '--data goes with --template'],
  ['--template with --subject', ['--to', 'a@example.com', '--template', 'w', '--subject', 'S'], 'cannot be combined'],
  ['--data that is not a JSON object', ['--to', 'a@example.com', '--template', 'w', '--data', '[1]'], 'a JSON object'],
  ['--tags without =', [...VALID, '--tags', 'campaign'], '--tags takes NAME=VALUE pairs'],
  [
    '--stack and --topic-arn',
    [...VALID, '--stack', 'S', '--topic-arn', 'arn:aws:sns:eu-west-1:123456789012:t'],
    'not both',
  ],
  ['a --topic-arn that is no SNS ARN', [...VALID, '--topic-arn', 'emails'], '--topic-arn must be an SNS topic ARN'],
  [
    'an unknown option',
    [...VALID, '--idempotency', 'k'],
    'unknown option --idempotency (did you mean --idempotency-key?)',
  ],
])('%s: exit 2, named as an option, with the short usage', async (_, args, said) => {
  const ran = await publish(...args);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(said);
  expect(ran.stderr).toMatch(/^Usage: email-pipeline publish/m);
  expect(ran.stderr).not.toContain('Target:');
});

test('a message that breaks the contract names each option and value at fault, and the key', async () => {
  const ran = await publish(
    ...['--to', 'ada@example.com', '--to', 'not-an-address', '--subject', 'Hi\r\nBcc: x@example.com', '--text', 'T'],
    ...['--tags', 'dedupe-key=1', '--idempotency-key', ' order-42'],
  );
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('--idempotency-key: must not be empty or start or end with spaces');
  expect(ran.stderr).toContain('--to "not-an-address": must be an email address');
  expect(ran.stderr).toContain('--subject: must not contain CR or LF (header injection)');
  expect(ran.stderr).toContain('--tags dedupe-key: names starting with "dedupe" are reserved');
});

test('a valid message with no local pipeline running exits 1 and says how to start one', async () => {
  const ran = await publish(...VALID, '--tags', 'campaign=spring,team=ops');
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain('No local pipeline found');
  expect(ran.stderr).toContain('Start one with npm start');
});

describe('--header and --attach (contract v1.2)', () => {
  test('--header without = and an unreadable --attach are usage errors', async () => {
    expect((await publish(...VALID, '--header', 'X-Campaign')).stderr).toContain('--header takes NAME=VALUE');
    const missing = await publish(...VALID, '--attach', path.join(stateDir(), 'nowhere.pdf'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
  });

  test('a header or a file the contract refuses is named by its option', async () => {
    const exe = path.join(stateDir(), 'setup.exe');
    writeFileSync(exe, 'MZ');
    const ran = await publish(...VALID, '--header', 'Subject=Hi', '--header', 'X-A=b\u0007', '--attach', exe);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('--header Subject: is set by SES or the pipeline');
    expect(ran.stderr).toContain('--header X-A: value must be printable ASCII');
    expect(ran.stderr).toContain(`--attach ${JSON.stringify(exe)}: is a file type SES does not send (.exe`);
  });

  test('one-click unsubscribe headers and a readable file pass the check (then the pipeline is looked for)', async () => {
    const pdf = path.join(stateDir(), 'invoice.pdf');
    writeFileSync(pdf, Buffer.alloc(300 * 1024, 1)); // too large inline: by s3Key
    const ran = await publish(
      ...VALID,
      ...['--header', 'List-Unsubscribe=<https://example.com/u/1>'],
      ...['--header', 'List-Unsubscribe-Post=List-Unsubscribe=One-Click', '--attach', pdf],
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('No local pipeline found');
  });
});

test('--team is checked as a team name, and cannot go with --topic-arn', async () => {
  expect(await publish(...VALID, '--team', 'Billing')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('"Billing" cannot be a team'),
  });
  const both = await publish(...VALID, '--team', 'billing', '--topic-arn', 'arn:aws:sns:eu-west-1:111122223333:t');
  expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('give --team or --topic-arn, not both') });
  expect((await publish('--help')).stdout).toContain('--team NAME');
});

test('--priority takes high or normal only, said in terms of the option', async () => {
  const ran = await publish(...VALID, '--priority', 'urgent');
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('--priority must be one of normal, high, got "urgent"');
  expect((await publish('--help')).stdout).toContain('--priority high|normal');
});
