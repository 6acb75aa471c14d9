/**
 * `email-pipeline callbacks`: which options go with which subcommand, replay's one selection
 * (--key or --since), --since's forms and the confirmation redrive and replay need, all before any
 * AWS call; then each subcommand against a local pipeline whose queues and table answer in this
 * process: the requests it makes (the ledger key of a team's key, the by-day index per day, one
 * replay id for every message, the state item deleted) and what it prints; a pipeline without
 * callbacks is told how to configure them.
 */
import { callbacksOptions, describeSelection } from '../../../../lib/cli/callbacks-command';
import { callbackKey } from '../../../../lib/cli/callbacks';
import { run } from '../../../../lib/cli/main';
import { capture, fakeLocalPipeline, type SentCommand } from '../../helpers';

const io = { out: () => undefined };
const terminal = { ...io, interactive: true };
const NOW = Date.parse('2026-12-04T10:00:00Z');
const usage = (argv: string[], on: typeof io = io) => {
  try {
    callbacksOptions(argv, on, NOW);
    return undefined;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
};

test('each subcommand takes its options; keys become the ledger keys of the team', () => {
  expect(callbacksOptions(['list', '--key', 'a', '--key', 'b', '--team', 'billing', '--json'], io)?.options).toEqual({
    sub: 'list',
    team: 'billing',
    keys: [
      { given: 'a', key: callbackKey('billing', 'a') },
      { given: 'b', key: callbackKey('billing', 'b') },
    ],
    history: false,
    json: true,
  });
  expect(callbacksOptions(['list', '--key', 'a', '--history'], io)?.options).toMatchObject({ history: true });
  expect(callbacksOptions(['redrive', '--yes', '--stack', 'S'], io)).toMatchObject({
    target: { stack: 'S' },
    options: { sub: 'redrive', mode: 'yes' },
  });
  expect(callbacksOptions(['replay', '--since', '2h', '--dry-run'], io, NOW)?.options).toMatchObject({
    since: '2026-12-04T08:00:00.000Z',
    mode: 'dry-run',
  });
  expect(callbacksOptions(['replay', '--since', '2026-12-03T08:00:00Z', '--yes'], io, NOW)?.options.since).toBe(
    '2026-12-03T08:00:00.000Z',
  );
  expect(callbacksOptions(['enable', '--team', 'billing'], io)?.options).toMatchObject({
    sub: 'enable',
    team: 'billing',
  });
  expect(callbacksOptions(['list', '--help'], io)).toBeUndefined();
});

test('usage errors name what is wrong, before any AWS call', () => {
  expect(usage([])).toBe('UsageError: say what to do: list, redrive, replay, enable');
  expect(usage(['replya'])).toBe('UsageError: unknown callbacks command "replya" (did you mean replay?)');
  expect(usage(['list', 'order-1'])).toContain('unexpected argument "order-1" (select keys with --key K)');
  expect(usage(['replay', '--yes'])).toContain('say which callbacks to replay: --key K');
  expect(usage(['replay', '--key', 'a', '--since', '2h', '--yes'])).toContain('not both');
  expect(usage(['replay', '--since', 'yesterday', '--yes'])).toContain('--since takes an ISO time');
  expect(usage(['list', '--since', '2h'])).toBe('UsageError: --since does not go with callbacks list');
  expect(usage(['enable', '--key', 'a'])).toBe('UsageError: --key does not go with callbacks enable');
  expect(usage(['list', '--history'])).toContain('--history lists the stored callbacks of a key');
  expect(usage(['list', '--team', 'Billing'])).toContain('"Billing" cannot be a team');
  expect(usage(['list', '--key', ''])).toContain('--key "" cannot be a dedupe key');
  // A change with no terminal to ask on needs --yes or --dry-run; with one, it asks.
  expect(usage(['redrive'])).toContain('with no terminal to ask on, add --yes');
  expect(usage(['replay', '--key', 'a'])).toContain('with no terminal to ask on, add --yes');
  expect(callbacksOptions(['replay', '--key', 'a'], terminal)?.options.mode).toBe('ask');
  expect(usage(['redrive', '--yes', '--dry-run'])).toContain('do not go together');
});

test('what a selection reads like', () => {
  expect(describeSelection({})).toBe('');
  expect(
    describeSelection({
      keys: [
        { given: 'a', key: 'x' },
        { given: 'b\n', key: 'y' },
      ],
      team: 'billing',
    }),
  ).toBe('of key a or b\\u000a of team billing');
  expect(describeSelection({ since: '2026-12-04T08:00:00.000Z' })).toBe('since 2026-12-04T08:00:00.000Z');
});

const CALLBACKS = {
  QueueUrl: 'http://sqs.local/0/cb',
  DeadLetterQueueUrl: 'http://sqs.local/0/cb-dlq',
  TableName: 'cb',
};

describe('against a pipeline with callbacks', () => {
  const pipeline = fakeLocalPipeline();
  Object.assign(pipeline.outputs, {
    Callbacks: JSON.stringify(CALLBACKS),
    Teams: JSON.stringify({ billing: { TopicArn: 'arn:billing', CallbackSigningSecret: 'whsec_x' } }),
  });
  const of = (name: string) => pipeline.sent.filter((s) => s.name === name).map((s) => s.input);
  const string = (value: string) => ({ DataType: 'String', StringValue: value });
  const billingKey = callbackKey('billing', 'order-7');

  /** The DLQ holds one dead letter of billing's order-7 and one of the pipeline's order-8, once. */
  function deadLetters(answer: (command: SentCommand) => unknown = () => ({})): void {
    let received = false;
    pipeline.answer = (command) => {
      if (command.name !== 'ReceiveMessageCommand') return answer(command);
      if (received) return {};
      received = true;
      return {
        Messages: [
          {
            MessageId: 'm1',
            ReceiptHandle: 'r1',
            Body: '{}',
            MessageAttributes: {
              'idempotency-key': string(billingKey),
              team: string('billing'),
              status: string('bounced'),
              'callback-failure': string('HTTP 404 Not Found: not retried'),
              'callback-first-try': string('2026-12-04T09:00:00.000Z'),
            },
          },
          {
            MessageId: 'm2',
            ReceiptHandle: 'r2',
            Body: '{}',
            MessageAttributes: { 'idempotency-key': string('order-8') },
          },
        ],
      };
    };
  }

  test('list prints one line per dead letter with its reason; --team takes only the team', async () => {
    deadLetters();
    const c = capture();
    expect(await run(['callbacks', 'list', '--team', 'billing'], c.io)).toBe(0);
    expect(c.out).toHaveLength(1);
    expect(c.out[0]).toContain(`key=${billingKey}  team=billing`);
    expect(c.out[0]).toContain('HTTP 404 Not Found: not retried');
    expect(c.err).toEqual([
      '1 callback(s) of team billing in the callbacks DLQ of the local pipeline (' + process.env.LOCAL_STATE_DIR + ').',
    ]);
  });

  test('redrive --dry-run says what it would move and moves nothing; --yes moves without the reason', async () => {
    deadLetters();
    const dry = capture();
    expect(await run(['callbacks', 'redrive', '--key', 'order-8', '--dry-run'], dry.io)).toBe(0);
    expect(dry.out.at(-1)).toContain('Would move 1 callback(s) of key order-8');
    expect(of('SendMessageCommand')).toEqual([]);
    deadLetters();
    const c = capture();
    expect(await run(['callbacks', 'redrive', '--team', 'billing', '--yes', '--json'], c.io)).toBe(0);
    expect(c.out).toEqual([JSON.stringify({ action: 'redrive', moved: 1, scanned: 2 })]);
    expect(of('SendMessageCommand')).toEqual([
      {
        QueueUrl: CALLBACKS.QueueUrl,
        MessageBody: '{}',
        MessageAttributes: {
          'idempotency-key': string(billingKey),
          team: string('billing'),
          status: string('bounced'),
        },
      },
    ]);
    expect(of('DeleteMessageCommand')).toEqual([{ QueueUrl: CALLBACKS.DeadLetterQueueUrl, ReceiptHandle: 'r1' }]);
  });

  test("replay --key queries the team's ledger key and sends every stored callback with one replay id", async () => {
    pipeline.answer = (command) =>
      command.name === 'QueryCommand'
        ? {
            Items: [
              { key: billingKey, id: 'msg_b', team: 'billing', at: '2026-12-04T09:00:00.000Z', body: '{}' },
              { key: billingKey, id: 'msg_a', team: 'billing', at: '2026-12-04T08:00:00.000Z', body: '{}' },
            ],
          }
        : command.name === 'SendMessageBatchCommand'
          ? { Successful: (command.input.Entries as unknown[]).map((_, i) => ({ Id: String(i) })) }
          : {};
    const c = capture();
    expect(await run(['callbacks', 'replay', '--key', 'order-7', '--team', 'billing', '--yes', '--json'], c.io)).toBe(
      0,
    );
    expect(of('QueryCommand')).toEqual([
      expect.objectContaining({ TableName: 'cb', ExpressionAttributeValues: { ':key': billingKey } }),
    ]);
    const [batch] = of('SendMessageBatchCommand') as {
      QueueUrl: string;
      Entries: { MessageBody: string; MessageAttributes: Record<string, { StringValue: string }> }[];
    }[];
    expect(batch?.QueueUrl).toBe(CALLBACKS.QueueUrl);
    // Oldest first.
    expect(batch?.Entries.map((e) => JSON.parse(e.MessageBody) as unknown)).toEqual([
      { replayOf: { key: billingKey, id: 'msg_a' } },
      { replayOf: { key: billingKey, id: 'msg_b' } },
    ]);
    const result = JSON.parse(c.out[0] ?? '{}') as { replayId: string; count: number };
    expect(result.count).toBe(2);
    expect(new Set(batch?.Entries.map((e) => e.MessageAttributes['callback-replay']?.StringValue))).toEqual(
      new Set([result.replayId]),
    );
  });

  test('replay --since queries the by-day index for each day, reads the items for --team, and keeps only its callbacks', async () => {
    const since = new Date(Date.now() - 26 * 3_600_000).toISOString();
    pipeline.answer = (command) => {
      if (command.name === 'QueryCommand') {
        const day = (command.input.ExpressionAttributeValues as Record<string, string>)[':day'];
        return {
          Items: [
            { key: `k-${day}`, id: 'msg_1', day, at: `${day}T10:00:00.000Z` },
            { key: 'own', id: 'msg_2', day, at: `${day}T11:00:00.000Z` },
          ],
        };
      }
      if (command.name === 'BatchGetCommand') {
        const keys =
          (command.input.RequestItems as Record<string, { Keys: { key: string; id: string }[] }>).cb?.Keys ?? [];
        return { Responses: { cb: keys.map((k) => ({ ...k, team: k.key === 'own' ? '*' : 'billing' })) } };
      }
      return {};
    };
    const c = capture();
    expect(await run(['callbacks', 'replay', '--since', since, '--team', 'billing', '--dry-run', '--json'], c.io)).toBe(
      0,
    );
    const queries = of('QueryCommand');
    expect(queries.length).toBeGreaterThanOrEqual(2);
    for (const query of queries) {
      expect(query).toMatchObject({
        IndexName: 'by-day',
        KeyConditionExpression: '#day = :day AND #at >= :since',
        ExpressionAttributeValues: { ':since': since },
      });
    }
    const plan = JSON.parse(c.out[0] ?? '{}') as { dryRun: boolean; count: number; callbacks: { team: string }[] };
    expect(plan).toMatchObject({ dryRun: true, count: queries.length });
    expect(plan.callbacks.every((row) => row.team === 'billing')).toBe(true);
    expect(of('SendMessageBatchCommand')).toEqual([]);
  });

  test('enable deletes the state item, saying since when it was disabled and why', async () => {
    pipeline.answer = (command) =>
      command.name === 'DeleteCommand'
        ? { Attributes: { disabledAt: '2026-12-04T09:00:00.000Z', disabledReason: 'HTTP 410 Gone' } }
        : {};
    const c = capture();
    expect(await run(['callbacks', 'enable', '--team', 'billing'], c.io)).toBe(0);
    expect(of('DeleteCommand')).toEqual([
      { TableName: 'cb', Key: { key: 'callback-state#billing', id: 'state' }, ReturnValues: 'ALL_OLD' },
    ]);
    expect(c.out[0]).toContain('The callback of team billing of the local pipeline');
    expect(c.out[0]).toContain('was disabled since 2026-12-04T09:00:00.000Z (HTTP 410 Gone): enabled');
    expect(c.err[0]).toContain('callbacks redrive --team billing');
    pipeline.answer = () => ({});
    const again = capture();
    expect(await run(['callbacks', 'enable', '--team', 'billing', '--json'], again.io)).toBe(0);
    expect(again.out).toEqual([JSON.stringify({ action: 'enable', target: 'billing', wasDisabled: false })]);
  });

  test('an unknown team lists the teams there are, before any request', async () => {
    const c = capture();
    expect(await run(['callbacks', 'list', '--team', 'sales'], c.io)).toBe(1);
    expect(c.err[0]).toContain('has no team sales: its teams are billing');
    expect(pipeline.sent).toEqual([]);
  });
});

describe('against a pipeline without callbacks', () => {
  fakeLocalPipeline();

  test('says so, and how to configure them', async () => {
    const c = capture();
    expect(await run(['callbacks', 'list'], c.io)).toBe(1);
    expect(c.err[0]).toContain('has no callbacks');
    expect(c.err[0]).toContain('teams.<name>.callbackUrl');
  });
});
