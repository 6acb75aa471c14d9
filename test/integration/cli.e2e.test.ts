/**
 * The operator CLI (`email-pipeline`, what `npm run dlq` and `npm run publish` run, and `npm run status`) as an operator meets it: a real
 * process against a local pipeline found through its outputs.json, with the exit codes of the
 * convention (0 done, 1 failed with what to do next, 2 usage error with a short usage line).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { freePort } from '../../tools/dev/local/processes';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { run } from '../../lib/cli/main';
import {
  addressedTo,
  CLI_ENTRY,
  cliEnv,
  runCli,
  sleep,
  startTestPipeline,
  TSX_CLI,
  writeCliOutputs,
  until,
  type CliRun,
  type TestPipeline,
} from './support';

let p: TestPipeline;
let stateDir: string;

beforeAll(async () => {
  p = await startTestPipeline();
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'cli-state-'));
  writeCliOutputs(stateDir, p);
});
afterAll(async () => {
  await p?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** An environment with no AWS region, profile or shared config: what a machine without AWS set up has. */
function noAwsConfig(): Record<string, string | undefined> {
  return {
    AWS_REGION: undefined,
    AWS_DEFAULT_REGION: undefined,
    AWS_PROFILE: undefined,
    AWS_CONFIG_FILE: path.join(stateDir, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(stateDir, 'no-credentials'),
  };
}

/** Runs the CLI; an `env` value of undefined removes that variable. */
function cli(args: readonly string[], env: Record<string, string | undefined> = {}): CliRun {
  return runCli(stateDir, args, { env, timeoutMs: 30_000 });
}

async function deadLetters(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await p.pipeline.sns.send(
      new PublishCommand({ TopicArn: p.pipeline.resources.topicArn, Message: `not json ${i}` }),
    );
  }
  await until(`${count} dead letters`, async () => (await p.pipeline.queueDepth('dlq')).visible === count);
}

describe('usage errors exit 2 with a short usage line', () => {
  test('no command at all', () => {
    const run = cli([]);
    expect(run).toMatchObject({ status: 2 });
    expect(run.stderr).toMatch(/^Usage: email-pipeline <command>/m);
  });

  test('a misspelled command is named with a suggestion', () => {
    const run = cli(['dql', 'list']);
    expect(run).toMatchObject({ status: 2 });
    expect(run.stderr).toContain('unknown command "dql" (did you mean dlq?)');
  });

  test('a misspelled subcommand and an unknown option are named with suggestions', () => {
    const sub = cli(['dlq', 'lis']);
    expect(sub).toMatchObject({ status: 2 });
    expect(sub.stderr).toContain('unknown dlq command "lis" (did you mean list?)');
    const option = cli(['dlq', 'list', '--maxx', '3']);
    expect(option).toMatchObject({ status: 2 });
    expect(option.stderr).toContain('unknown option --maxx (did you mean --max?)');
    expect(option.stderr).toMatch(/^Usage: email-pipeline dlq list/m);
    // Only the short usage, not the whole help text.
    expect(option.stderr).not.toContain('Target:');
  });

  test('a bad value and a missing confirmation are usage errors too', () => {
    expect(cli(['dlq', 'list', '--max', 'ten']).stderr).toContain(
      '--max must be a whole number of at least 1, got "ten"',
    );
    // No terminal on stdin here (as in CI): a change without --yes or --dry-run is refused before anything is read.
    const purge = cli(['dlq', 'purge']);
    expect(purge).toMatchObject({ status: 2, stdout: '' });
    expect(purge.stderr).toContain(
      'dlq purge deletes every message in the DLQ for good: with no terminal to ask on, add --yes to go ahead, or --dry-run',
    );
    expect(cli(['dlq', 'delete', '--code', 'InvalidJson'])).toMatchObject({ status: 2 });
    expect(cli(['resend', 'order-42', '--reason', 'fixed'])).toMatchObject({ status: 2 });
    const code = cli(['dlq', 'delete', '--code', 'InvalidJsn', '--yes']);
    expect(code).toMatchObject({ status: 2 });
    expect(code.stderr).toContain('unknown error code "InvalidJsn" (did you mean InvalidJson?)');
  });
});

test('--version prints the package version', () => {
  const run = cli(['--version']);
  expect(run).toMatchObject({ status: 0, stderr: '' });
  expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
});

test('--help prints the command usage to stdout and exits 0', () => {
  const run = cli(['dlq', '--help']);
  expect(run).toMatchObject({ status: 0 });
  expect(run.stdout).toContain('email-pipeline dlq redrive');
  expect(run.stderr).toBe('');
});

describe('operations', () => {
  afterEach(async () => {
    if ((await p.pipeline.queueDepth('dlq')).visible > 0) cli(['dlq', 'purge', '--yes']);
  });

  test('list says the DLQ is empty, then lists each dead letter, also as JSON lines', async () => {
    const empty = cli(['dlq', 'list']);
    expect(empty).toMatchObject({ status: 0 });
    expect(empty.stdout).toMatch(/The DLQ of the local pipeline \(.*\) is empty\./);

    await deadLetters(2);
    const listed = cli(['dlq', 'list']);
    expect(listed).toMatchObject({ status: 0 });
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
    expect(listed.stdout).toContain('InvalidJson');
    const json = cli(['dlq', 'list', '--json']);
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { errorCode: string }).errorCode),
    ).toEqual(['InvalidJson', 'InvalidJson']);
  });

  test('output is safe to pipe: a reader that has gone away ends the command quietly with 0', async () => {
    await deadLetters(3);
    // `true` exits without reading: every line the CLI writes meets a closed pipe (EPIPE).
    const run = spawnSync(`set -o pipefail; "${process.execPath}" "${TSX_CLI}" "${CLI_ENTRY}" dlq list | true`, {
      shell: '/bin/bash',
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: cliEnv(stateDir),
    });
    expect(run).toMatchObject({ status: 0 });
    expect(run.stderr).not.toMatch(/EPIPE|Error/);
  });

  test('redrive says how many went back; purge empties the DLQ', async () => {
    await deadLetters(2);
    // --max copies one by one, which the move task cannot: only with --copy, said on the command line.
    expect(cli(['dlq', 'redrive', '--max', '1', '--yes']).stderr).toContain('add --copy to say so');
    // InvalidJson is the publisher's fault: a redrive cannot fix it, so it takes --force.
    const refused = cli(['dlq', 'redrive', '--copy', '--max', '1', '--yes']);
    expect(refused).toMatchObject({ status: 1 });
    expect(refused.stderr).toContain('holds messages a redrive cannot fix (2 InvalidJson)');
    const redrive = cli(['dlq', 'redrive', '--copy', '--max', '1', '--force', '--yes']);
    expect(redrive).toMatchObject({ status: 0 });
    expect(redrive.stdout).toContain('Moved 1 message(s) from the DLQ back to the queue');
    await until('the redriven one dead-lettered again', async () => (await p.pipeline.queueDepth('dlq')).visible === 2);
    const purge = cli(['dlq', 'purge', '--yes']);
    expect(purge).toMatchObject({ status: 0 });
    expect(purge.stdout).toContain('Purged the DLQ');
  });

  test('--dry-run says what would be done and changes nothing; --json says what was done', async () => {
    await deadLetters(2);
    const dry = cli(['dlq', 'delete', '--code', 'InvalidJson', '--dry-run']);
    expect(dry).toMatchObject({ status: 0 });
    expect(dry.stdout.split('\n').filter((l) => l.includes('InvalidJson'))).toHaveLength(3);
    expect(dry.stdout).toMatch(
      /Would delete 2 message\(s\) with code InvalidJson from the DLQ of the local pipeline .* \(2 scanned\), for good\. Nothing was changed \(--dry-run\)\./,
    );
    const purgeDry = cli(['dlq', 'purge', '--dry-run', '--json']);
    expect(JSON.parse(purgeDry.stdout)).toEqual({ action: 'purge', queue: 'send', approximateCount: 2, dryRun: true });
    const redriveDry = cli(['dlq', 'redrive', '--force', '--dry-run']);
    expect(redriveDry.stdout).toContain('Would move all the messages of the DLQ of the local pipeline');
    expect(redriveDry.stderr).toContain(
      'The local emulator has no message move task: the messages are moved one by one.',
    );
    expect((await p.pipeline.queueDepth('dlq')).visible).toBe(2);

    const deleted = cli(['dlq', 'delete', '--code', 'InvalidJson', '--yes', '--json']);
    expect(deleted).toMatchObject({ status: 0 });
    expect(JSON.parse(deleted.stdout)).toEqual({
      action: 'delete',
      queue: 'send',
      code: 'InvalidJson',
      deleted: 2,
      scanned: 2,
    });
    expect((await p.pipeline.queueDepth('dlq')).visible).toBe(0);
  });

  test('with a terminal it asks first: anything but y changes nothing (exit 1); y goes ahead', async () => {
    await deadLetters(2);
    const saved = process.env.LOCAL_STATE_DIR;
    process.env.LOCAL_STATE_DIR = stateDir;
    try {
      const asking = (answer: string) => {
        const said = { out: [] as string[], err: [] as string[], asked: [] as string[] };
        const io = {
          out: (l: string) => said.out.push(l),
          err: (l: string) => said.err.push(l),
          interactive: true,
          ask: async (question: string) => {
            said.asked.push(question);
            return answer;
          },
        };
        return { io, said };
      };
      const no = asking('n');
      expect(await run(['dlq', 'purge'], no.io)).toBe(1);
      expect(no.said.asked).toEqual([
        expect.stringMatching(
          /^Delete every message in the DLQ of the local pipeline .* \(about 2\) for good\? \[y\/N\] $/,
        ),
      ]);
      expect(no.said.err.join('\n')).toContain('Not confirmed: nothing was changed.');
      expect((await p.pipeline.queueDepth('dlq')).visible).toBe(2);

      const yes = asking('y');
      expect(await run(['dlq', 'delete', '--code', 'InvalidJson'], yes.io)).toBe(0);
      expect(yes.said.asked).toEqual([
        expect.stringContaining('Delete 2 message(s) with code InvalidJson from the DLQ'),
      ]);
      expect(yes.said.out.join('\n')).toContain('Deleted 2 message(s) with code InvalidJson');
    } finally {
      if (saved === undefined) delete process.env.LOCAL_STATE_DIR;
      else process.env.LOCAL_STATE_DIR = saved;
    }
  });
});

describe('a failed operation exits 1 and says what to do next', () => {
  test('no local pipeline', () => {
    const run = cli(['dlq', 'list'], { LOCAL_STATE_DIR: path.join(stateDir, 'nowhere') });
    expect(run).toMatchObject({ status: 1 });
    expect(run.stderr).toContain('No local pipeline found');
    expect(run.stderr).toContain('Start one with npm start');
  });

  test('outside this repository, no stack named: --stack is advised, npm start is not', () => {
    const app = mkdtempSync(path.join(os.tmpdir(), 'cli-user-app-'));
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'user-app' }));
    const outside = runCli(stateDir, ['status', 'order-42'], {
      cwd: app,
      timeoutMs: 30_000,
      env: { LOCAL_STATE_DIR: undefined, EMAIL_PIPELINE_STACK: undefined },
    });
    rmSync(app, { recursive: true, force: true });
    expect(outside.status).toBe(1);
    expect(outside.stderr).toContain('No pipeline named: pass --stack NAME (or set EMAIL_PIPELINE_STACK)');
    expect(outside.stderr).not.toContain('npm start');
  });

  test('outputs.json left by a pipeline that is gone', async () => {
    const stale = mkdtempSync(path.join(os.tmpdir(), 'cli-stale-'));
    const port = await freePort();
    writeFileSync(
      path.join(stale, 'outputs.json'),
      JSON.stringify({ SqsEndpoint: `http://127.0.0.1:${port}`, DeadLetterQueueUrl: 'x', QueueUrl: 'y' }),
    );
    const run = cli(['dlq', 'list'], { LOCAL_STATE_DIR: stale });
    rmSync(stale, { recursive: true, force: true });
    expect(run).toMatchObject({ status: 1 });
    expect(run.stderr).toContain('is not running');
    expect(run.stderr).toContain('Start it again with npm start');
    expect(run.stderr).not.toContain('ECONNREFUSED');
  });

  test('--stack with no region configured', () => {
    const run = cli(['dlq', 'list', '--stack', 'EmailPipeline'], noAwsConfig());
    expect(run).toMatchObject({ status: 1 });
    expect(run.stderr).toContain('No AWS region is configured: pass --region, or set AWS_REGION');
  });
});

describe('publish', () => {
  // That the copy is never mailed is the pipeline's part (publisher.e2e.test.ts); here, that the key went with it.
  test('publishes to the local pipeline with the key as the dedupe key', async () => {
    const to = p.address('cli-publish');
    const args = ['publish', '--to', to, '--subject', 'From the CLI', '--text', 'Hi', '--tags', 'source=cli'];

    const first = cli([...args, '--idempotency-key', 'cli-order-42']);
    const again = cli([...args, '--idempotency-key', 'cli-order-42']);

    expect(first).toMatchObject({ status: 0 });
    expect(first.stdout).toMatch(/^Published \S+ to the local pipeline \(.*\) with idempotency key cli-order-42$/m);
    expect(again).toMatchObject({ status: 0 });
    await until('the copy suppressed', () => p.decisions('duplicate').some((d) => d.dedupeKey === 'cli-order-42'));
    const mailed = addressedTo(await p.emails(), to);
    expect(mailed.map((e) => e.subject)).toContain('From the CLI');
  });

  test('a message that breaks the contract exits 2 and is not published', async () => {
    const before = p.decisions('dead-lettered').length;
    const run = cli(['publish', '--to', 'not-an-address', '--subject', 'Hello', '--text', 'Hi']);
    expect(run).toMatchObject({ status: 2 });
    expect(run.stderr).toContain('--to "not-an-address": must be an email address');
    expect(run.stdout).toBe('');
    // A copy that reached the queue would be dead-lettered within a second or two.
    await sleep(2000);
    expect(p.decisions('dead-lettered')).toHaveLength(before);
  });

  test('a topic that is gone exits 1 with what SNS said', () => {
    const gone = mkdtempSync(path.join(os.tmpdir(), 'cli-gone-'));
    writeFileSync(
      path.join(gone, 'outputs.json'),
      JSON.stringify({
        TopicArn: `${p.pipeline.resources.topicArn}-gone`,
        SnsEndpoint: p.endpoints.sns,
        SqsEndpoint: p.endpoints.sqs,
      }),
    );
    const run = cli(['publish', '--to', p.address('gone'), '--subject', 'S', '--text', 'T'], { LOCAL_STATE_DIR: gone });
    rmSync(gone, { recursive: true, force: true });
    expect(run).toMatchObject({ status: 1 });
    expect(run.stderr).toContain('Could not publish to the local pipeline');
    expect(run.stderr).not.toMatch(/^Usage:/m);
  });
});

describe('status (email-pipeline status, npm run status) follows the same convention', () => {
  const status = (args: readonly string[], env: Record<string, string | undefined> = {}) =>
    cli(['status', ...args], env);

  test('usage errors exit 2 with the short usage: no key, an unknown option, a key that cannot be a dedupe key', () => {
    const none = status([]);
    expect(none).toMatchObject({ status: 2, stdout: '' });
    expect(none.stderr).toContain('email-pipeline: say which key');
    expect(none.stderr).toMatch(/^Usage: email-pipeline status /m);
    expect(none.stderr).not.toContain('Target:');
    const option = status(['--jsno', 'order-42']);
    expect(option).toMatchObject({ status: 2 });
    expect(option.stderr).toContain('unknown option --jsno (did you mean --json?)');
    const padded = status([' order-42 ']);
    expect(padded).toMatchObject({ status: 2 });
    expect(padded.stderr).toContain('cannot be a dedupe key: it must not be empty or start or end with spaces');
  });

  test('--help prints the whole usage to stdout and exits 0', () => {
    const run = status(['--help']);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toContain('Without a stack, the local\npipeline of this repository');
  });

  test('a report exits 0, as text or one JSON object, unknown keys included', () => {
    const text = status(['never-published']);
    expect(text).toMatchObject({ status: 0, stderr: '' });
    expect(text.stdout).toMatch(/^never-published: unknown \(nothing is recorded/);
    const json = status(['--json', 'never-published']);
    expect(json).toMatchObject({ status: 0 });
    expect(JSON.parse(json.stdout)).toEqual({ key: 'never-published', status: 'unknown', events: [] });
  });

  test('no pipeline, a pipeline that is gone, no region: exit 1 with what to do next', async () => {
    const none = status(['order-42'], { LOCAL_STATE_DIR: path.join(stateDir, 'nowhere') });
    expect(none).toMatchObject({ status: 1 });
    expect(none.stderr).toContain('No local pipeline found');

    const stale = mkdtempSync(path.join(os.tmpdir(), 'status-stale-'));
    const port = await freePort();
    const gone = `http://127.0.0.1:${port}`;
    writeFileSync(path.join(stale, 'outputs.json'), JSON.stringify({ SqsEndpoint: gone, DynamoDbEndpoint: gone }));
    const left = status(['order-42'], { LOCAL_STATE_DIR: stale });
    rmSync(stale, { recursive: true, force: true });
    expect(left).toMatchObject({ status: 1 });
    expect(left.stderr).toContain('is not running');
    expect(left.stderr).not.toContain('ECONNREFUSED');

    const noRegion = status(['--stack', 'EmailPipeline', 'order-42'], noAwsConfig());
    expect(noRegion).toMatchObject({ status: 1 });
    expect(noRegion.stderr).toContain('No AWS region is configured: pass --region');
  });
});
