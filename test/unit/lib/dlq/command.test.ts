/**
 * `email-pipeline dlq`: which options go with which subcommand; the vocabulary (stop-task, --key
 * repeated, --code checked, --copy with --max) and the confirmation every change needs, all before
 * any AWS call; the rate a native move task is given.
 */
import { dlqOptions } from '../../../../lib/dlq/command';
import { run } from '../../../../lib/cli/main';

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
