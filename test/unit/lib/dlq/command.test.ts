/**
 * `email-pipeline dlq`: which options go with which subcommand; the vocabulary (stop-task, --key
 * repeated, --code checked, --copy with --max) and the confirmation every change needs, all before
 * any AWS call; the rate a native move task is given; --team, which selects a team's dead letters
 * (`<team>#<key>`), checked and then run against a local pipeline whose DLQ answers in this process.
 */
import { dlqOptions } from '../../../../lib/dlq/command';
import { run } from '../../../../lib/cli/main';
import { DLQ_ATTRIBUTE } from '../../../../lambdas/kernel/names';
import { capture, fakeLocalPipeline, type SentCommand } from '../../helpers';

const warnings: string[] = [];
const io = { out: () => undefined, err: (line: string) => warnings.push(line) };
const terminal = { ...io, interactive: true };
beforeEach(() => {
  warnings.length = 0;
});
const usage = (argv: string[], on: typeof io = io) => {
  try {
    dlqOptions(argv, on);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

test('selective and queue options parse', () => {
  expect(
    dlqOptions(['redrive', '--code', 'RetryBudgetExhausted', '--queue', 'subscription', '--yes'], io),
  ).toMatchObject({
    sub: 'redrive',
    options: { queue: 'subscription', code: 'RetryBudgetExhausted', force: false, mode: 'yes' },
  });
  // The ledger DLQ holds SES events, not sends: no code or key to select by.
  expect(usage(['redrive', '--code', 'RetryBudgetExhausted', '--queue', 'ledger', '--yes'])).toContain(
    '--code does not go with --queue ledger',
  );
  expect(dlqOptions(['redrive', '--queue', 'ledger', '--stall', '30', '--dry-run'], io)?.options).toMatchObject({
    queue: 'ledger',
    stallSeconds: 30,
    mode: 'dry-run',
  });
  expect(dlqOptions(['delete', '--key', 'order-42', '-y'], io)?.options).toMatchObject({
    queue: 'send',
    keys: ['order-42'],
  });
  expect(dlqOptions(['redrive', '--rate', '20', '--stack', 'S', '--yes'], io)).toMatchObject({
    target: { stack: 'S' },
    options: { rate: 20 },
  });
  expect(dlqOptions(['list', '--summary', '--json'], io)?.options).toMatchObject({ summary: true, json: true });
});

test('--key selects and may be repeated; a key is never positional in dlq', () => {
  expect(dlqOptions(['list', '--key', 'a', '--key', 'b'], io)?.options.keys).toEqual(['a', 'b']);
  expect(usage(['delete', 'order-42', '--yes'])).toContain('unexpected argument "order-42" (select keys with --key K)');
  expect(usage(['list', '--key', ''])).toContain('--key needs a dedupe key');
});

test('--code is checked against the known error codes, with a suggestion', () => {
  expect(usage(['delete', '--code', 'InvalidJSON', '--yes'])).toBe(
    'unknown error code "InvalidJSON" (did you mean InvalidJson?): dlq list --summary shows the codes a DLQ holds; dlq --help lists them all',
  );
  expect(usage(['list', '--code', 'RetryBudgetExhaustd'])).toContain('did you mean RetryBudgetExhausted?');
  expect(usage(['list', '--code', 'MaxReceiveCountExceeded'])).toBeUndefined();
});

test('--max does not switch a whole redrive from the move task to copying unless --copy says so', () => {
  expect(usage(['redrive', '--max', '5', '--yes'])).toContain(
    "--max moves at most N messages one by one, which SQS's move task cannot: add --copy",
  );
  expect(dlqOptions(['redrive', '--max', '5', '--copy', '--yes'], io)?.options).toMatchObject({ max: 5, copy: true });
  expect(dlqOptions(['redrive', '--max', '5', '--key', 'k', '--yes'], io)?.options).toMatchObject({ max: 5 });
  expect(usage(['redrive', '--rate', '5', '--copy', '--yes'])).toContain('--rate goes with the move task');
  expect(usage(['redrive', '--queue', 'ledger', '--copy', '--yes'])).toContain(
    '--copy does not go with --queue ledger',
  );
});

test('every change asks first, or takes --yes; with no terminal and neither, a usage error', () => {
  for (const argv of [['delete', '--code', 'InvalidJson'], ['purge'], ['redrive'], ['redrive', '--queue', 'ledger']]) {
    expect(usage(argv)).toMatch(
      /: with no terminal to ask on, add --yes to go ahead, or --dry-run to see what it would do$/,
    );
    expect(dlqOptions(argv, terminal)?.options.mode).toBe('ask');
    expect(dlqOptions([...argv, '--dry-run'], io)?.options.mode).toBe('dry-run');
  }
  expect(usage(['purge', '--yes', '--dry-run'])).toContain('--yes and --dry-run do not go together');
  expect(usage(['list', '--yes'])).toContain('--yes does not go with dlq list');
  expect(dlqOptions(['list'], io)?.options.mode).toBeUndefined();
});

test('old spellings still work, with a warning on stderr: dlq cancel, purge --yes-delete-all-messages', () => {
  expect(dlqOptions(['cancel', '--task', 'h-1'], io)).toMatchObject({ sub: 'stop-task', options: { task: 'h-1' } });
  expect(warnings).toEqual([
    'email-pipeline: dlq cancel is deprecated: use dlq stop-task (the old spelling goes in a future major version)',
  ]);
  expect(dlqOptions(['purge', '--yes-delete-all-messages'], io)?.options.mode).toBe('yes');
  expect(warnings[1]).toContain('dlq purge --yes-delete-all-messages is deprecated: use dlq purge --yes');
});

test('what does not go together is a usage error naming it', () => {
  expect(usage(['delete', '--yes'])).toContain('say which messages: dlq delete --key K');
  expect(usage(['purge', '--key', 'k'])).toContain('--key does not go with dlq purge');
  expect(usage(['list', '--summary', '--code', 'InvalidJson'])).toContain('--summary counts every message by code');
  expect(usage(['redrive', '--rate', '10', '--key', 'k', '--yes'])).toContain('--rate goes with the move task');
  expect(usage(['redrive', '--rate', '501', '--yes'])).toContain('--rate is at most 500');
  expect(usage(['list', '--queue', 'ledgr'])).toContain('unknown queue "ledgr" (did you mean ledger?)');
  expect(usage(['stop-task'])).toContain('dlq stop-task --task HANDLE');
  expect(usage(['list', '--force'])).toContain('--force does not go with dlq list');
  expect(usage(['list', '--pipeline', 'Billing'])).toContain(
    '--pipeline picks a pipeline of a deployed stack: name the stack too, with --stack NAME or EMAIL_PIPELINE_STACK',
  );
});

test('a usage error exits 2 with the short usage, before the target is looked for', async () => {
  const err: string[] = [];
  const code = await run(['dlq', 'delete', '--code', 'InvalidJson', '--stack', 'NoSuchStack'], {
    out: () => undefined,
    err: (line) => err.push(line),
  });
  expect(code).toBe(2);
  expect(err.join('\n')).toContain('dlq delete deletes messages for good: with no terminal to ask on, add --yes');
  expect(err.join('\n')).toMatch(/^Usage: email-pipeline dlq list/m);
  expect(err.join('\n')).not.toContain('Target:');
});

test('the native move task gets the rate asked for (MaxNumberOfMessagesPerSecond), capped at 500', async () => {
  const { redrive } = await import('../../../../lib/dlq/dead-letters');
  const inputs: unknown[] = [];
  const sqs = {
    send: async (command: { input: unknown }) => {
      inputs.push(command.input);
      return { TaskHandle: 'h-1' };
    },
  } as never;
  const base = { dlqUrl: 'u', dlqArn: 'arn:dlq', sourceQueueUrl: 's', sourceQueueArn: 'arn:src' };
  await redrive(sqs, { ...base, ratePerSecond: 25 });
  await redrive(sqs, base);
  expect(inputs).toEqual([
    { SourceArn: 'arn:dlq', DestinationArn: 'arn:src', MaxNumberOfMessagesPerSecond: 25 },
    { SourceArn: 'arn:dlq', DestinationArn: 'arn:src' },
  ]);
});

describe('--team', () => {
  test("--key K of a team selects <team>#K; without --key, the team's keys", () => {
    expect(
      dlqOptions(['redrive', '--team', 'billing', '--key', 'a', '--key', 'b', '--yes'], io)?.options,
    ).toMatchObject({ keys: ['billing#a', 'billing#b'], team: 'billing' });
    expect(dlqOptions(['delete', '--team', 'billing', '--yes'], io)?.options).toMatchObject({ team: 'billing' });
    expect(dlqOptions(['delete', '--team', 'billing', '--yes'], io)?.options).not.toHaveProperty('keys');
    expect(dlqOptions(['list', '--team', 'billing', '--summary'], io)?.options).toMatchObject({
      team: 'billing',
      summary: true,
    });
    expect(dlqOptions(['list', '--key', 'billing#a'], io)?.options.keys).toEqual(['billing#a']);
  });

  test.each([['Billing'], ['billing#x'], [''], ['1billing']])(
    '--team %j is refused with the words of status',
    (team) => {
      expect(usage(['list', '--team', team])).toBe(
        `${JSON.stringify(team)} cannot be a team: a team name is 1 to 32 lowercase letters, digits or "-", starting with a letter`,
      );
    },
  );

  test('purge stays pipeline-wide: purge --team is a usage error saying why and what to use', () => {
    expect(usage(['purge', '--team', 'billing', '--yes'])).toBe(
      '--team does not go with dlq purge: purge deletes every message in the DLQ, whatever its team; use dlq delete --team NAME',
    );
  });

  test("what a team's selection does not go with", () => {
    expect(usage(['list', '--team', 'billing', '--queue', 'ledger'])).toContain(
      '--team does not go with --queue ledger',
    );
    expect(usage(['delete', '--team', 'billing', '--queue', 'subscription', '--yes'])).toContain(
      '--team does not go with --queue subscription',
    );
    expect(usage(['redrive', '--team', 'billing', '--rate', '10', '--yes'])).toContain(
      '--rate goes with the move task',
    );
    expect(usage(['tasks', '--team', 'billing'])).toContain('--team does not go with dlq tasks');
  });

  test('dlq --help tells of --team', async () => {
    const c = capture();
    expect(await run(['dlq', '--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toContain('(--code C | --key K... | --team NAME)');
    expect(c.out.join('\n')).toContain('--key K selects <team>#K');
  });

  test('a bad team name exits 2 with the short usage, before the target is looked for', async () => {
    const c = capture();
    expect(await run(['dlq', 'delete', '--team', 'Billing', '--yes', '--stack', 'NoSuchStack'], c.io)).toBe(2);
    expect(c.err.join('\n')).toContain('"Billing" cannot be a team');
    expect(c.err.join('\n')).not.toContain('Target:');
  });

  describe('against a local pipeline', () => {
    const pipeline = fakeLocalPipeline();
    const deadLetter = (key: string, code = 'RetryBudgetExhausted') => ({
      MessageId: `m-${key}`,
      ReceiptHandle: `r-${key}`,
      Body: '{}',
      MessageAttributes: {
        [DLQ_ATTRIBUTE.dedupeKey]: { DataType: 'String', StringValue: key },
        [DLQ_ATTRIBUTE.errorClass]: { DataType: 'String', StringValue: 'retryable' },
        [DLQ_ATTRIBUTE.errorCode]: { DataType: 'String', StringValue: code },
      },
    });
    /** The DLQ holds a dead letter of each key (each receive of a scan takes them all once). */
    const holding = (...keys: string[]) => {
      let received = false;
      pipeline.answer = (command: SentCommand) => {
        if (command.name === 'ChangeMessageVisibilityBatchCommand') received = false;
        if (command.name !== 'ReceiveMessageCommand' || received) return {};
        received = true;
        return { Messages: keys.map((key) => deadLetter(key)) };
      };
    };
    const handles = (name: string) =>
      pipeline.sent.filter((s) => s.name === name).map((s) => s.input.ReceiptHandle as string);

    test("delete --team deletes only the team's dead letters and says whose", async () => {
      holding('billing#a', 'a', 'sales#a', 'billing-eu#b', 'billing#b');
      const c = capture();
      expect(await run(['dlq', 'delete', '--team', 'billing', '--yes'], c.io)).toBe(0);
      expect(handles('DeleteMessageCommand')).toEqual(['r-billing#a', 'r-billing#b']);
      expect(c.out).toEqual([
        expect.stringMatching(/^Deleted 2 message\(s\) of team billing from the DLQ of .* \(5 scanned\)\.$/),
      ]);
    });

    test("redrive --team --key moves the team's key back and names it <team>#<key>", async () => {
      holding('a', 'billing#a', 'sales#a');
      const c = capture();
      expect(await run(['dlq', 'redrive', '--team', 'billing', '--key', 'a', '--yes'], c.io)).toBe(0);
      expect(handles('DeleteMessageCommand')).toEqual(['r-billing#a']);
      expect(pipeline.sent.filter((s) => s.name === 'SendMessageCommand').map((s) => s.input.QueueUrl)).toEqual([
        pipeline.outputs.QueueUrl,
      ]);
      expect(c.out).toEqual([
        expect.stringMatching(
          /^Moved 1 message\(s\) with key billing#a from the DLQ of .* back to its queue \(3 scanned\)\.$/,
        ),
      ]);
    });

    test("list --team lists the team's dead letters only, the key printed whole; --json names the team", async () => {
      holding('a', 'billing#a', 'sales#b');
      const c = capture();
      expect(await run(['dlq', 'list', '--team', 'billing'], c.io)).toBe(0);
      expect(c.out).toHaveLength(1);
      expect(c.out[0]).toContain('billing#a');
      holding('a', 'billing#a');
      const dry = capture();
      expect(await run(['dlq', 'delete', '--team', 'billing', '--dry-run', '--json'], dry.io)).toBe(0);
      expect(JSON.parse(dry.out[0]!)).toMatchObject({ action: 'delete', team: 'billing', count: 1, dryRun: true });
      expect(handles('DeleteMessageCommand')).toEqual([]);
    });

    test("list --team --summary counts the team's dead letters by code", async () => {
      holding('billing#a', 'a', 'billing#b');
      const c = capture();
      expect(await run(['dlq', 'list', '--team', 'billing', '--summary'], c.io)).toBe(0);
      expect(c.out).toEqual([expect.stringMatching(/^ +2 +retryable +RetryBudgetExhausted$/)]);
      expect(c.err).toEqual([expect.stringMatching(/^2 message\(s\) of team billing in the DLQ of /)]);
    });
  });
});
