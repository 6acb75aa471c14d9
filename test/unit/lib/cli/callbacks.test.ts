/**
 * The callbacks command's pure parts: where a pipeline's callbacks are and which target --team
 * names (with errors naming what to configure, or the teams there are), the ledger key of --key,
 * what a callbacks DLQ message says and how it is printed and selected, a stored callback as a row,
 * the days --since spans and the replay messages.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { CALLBACK_ATTRIBUTE, CALLBACK_RETENTION_SECONDS } from '../../../../lambdas/kernel/callbacks/names';
import { ledgerKey } from '../../../../lambdas/kernel/ledger/schema';
import { webhookId } from '../../../../lambdas/kernel/callbacks/webhook';
import {
  callbackKey,
  callbackRow,
  callbacksOf,
  checkCallbackTarget,
  daysSince,
  describeCallbackLetter,
  formatCallbackLetter,
  formatCallbackRow,
  replayBatches,
  selects,
  stateItemKey,
  teamsWithCallbacks,
} from '../../../../lib/cli/callbacks';

const CALLBACKS = { QueueUrl: 'https://sqs/cb', DeadLetterQueueUrl: 'https://sqs/cb-dlq', TableName: 'cb' };
const WHERE = 'stack Mail';

test("a pipeline's callbacks are read from its outputs, as JSON text (a stack) or an object (locally)", () => {
  const expected = { queueUrl: 'https://sqs/cb', deadLetterQueueUrl: 'https://sqs/cb-dlq', tableName: 'cb' };
  expect(callbacksOf({ Callbacks: JSON.stringify(CALLBACKS) }, WHERE)).toEqual(expected);
  expect(callbacksOf({ Callbacks: CALLBACKS }, WHERE)).toEqual(expected);
  expect(callbacksOf({ Endpoints: { Callbacks: CALLBACKS } }, WHERE)).toEqual(expected);
});

test('a pipeline without callbacks is said so, with how to configure them', () => {
  for (const outputs of [{}, { Callbacks: '{"QueueUrl":"q"}' }, { Callbacks: 'not json' }]) {
    expect(() => callbacksOf(outputs, WHERE)).toThrow(/^stack Mail has no callbacks/);
  }
  expect(() => callbacksOf({}, WHERE)).toThrow(/callbackUrl .* teams\.<name>\.callbackUrl/);
});

const TEAMS = {
  billing: { TopicArn: 'arn:billing', CallbackSigningSecretArn: 'arn:secret:billing' },
  sales: { TopicArn: 'arn:sales' },
  fraud: { TopicArn: 'arn:fraud', CallbackSigningSecret: 'whsec_x' },
};

test('--team names a team with a callback; an unknown team lists the teams, one without a callback those with one', () => {
  const outputs = { Callbacks: CALLBACKS, Teams: JSON.stringify(TEAMS) };
  expect(teamsWithCallbacks(outputs)).toEqual(['billing', 'fraud']);
  expect(() => checkCallbackTarget(outputs, 'billing', WHERE)).not.toThrow();
  expect(() => checkCallbackTarget(outputs, 'ops', WHERE)).toThrow(
    'stack Mail has no team ops: its teams are billing, sales, fraud',
  );
  expect(() => checkCallbackTarget(outputs, 'sales', WHERE)).toThrow(
    'Team sales of stack Mail has no callback (teams.sales.callbackUrl); the teams with one are billing, fraud.',
  );
  expect(() => checkCallbackTarget({ Callbacks: CALLBACKS }, 'billing', WHERE)).toThrow('it has no teams');
});

test("without --team, the pipeline's own callback; refused only when it has none and teams have", () => {
  const teams = { Teams: TEAMS };
  expect(() => checkCallbackTarget({ Callbacks: CALLBACKS, ...teams }, undefined, WHERE)).toThrow(
    'stack Mail has no callback of its own (callbackUrl): the teams with one are billing, fraud; name one with --team NAME.',
  );
  const own = { Callbacks: { ...CALLBACKS, SigningSecretArn: 'arn:secret' }, ...teams };
  expect(() => checkCallbackTarget(own, undefined, WHERE)).not.toThrow();
  expect(() =>
    checkCallbackTarget({ Callbacks: CALLBACKS, CallbackSigningSecret: 'whsec_x', ...teams }, undefined, WHERE),
  ).not.toThrow();
  expect(() => checkCallbackTarget({ Callbacks: CALLBACKS }, undefined, WHERE)).not.toThrow();
});

test("--key is the callbacks table's key: the ledger key of the team's key (hashed), NFC", () => {
  expect(callbackKey(undefined, 'order-42')).toBe('order-42');
  expect(callbackKey('billing', 'order-42')).toBe(ledgerKey('billing#order-42'));
  expect(callbackKey('billing', 'order-42')).toMatch(/^sha256-[0-9a-f]{64}$/);
  expect(callbackKey(undefined, 'cafe\u0301')).toBe(ledgerKey('caf\u00e9'));
  expect(stateItemKey('billing')).toEqual({ key: 'callback-state#billing', id: 'state' });
  expect(stateItemKey(undefined)).toEqual({ key: 'callback-state#*', id: 'state' });
});

const string = (value: string) => ({ DataType: 'String', StringValue: value });
const NOW = Date.parse('2026-12-04T10:00:00Z');

test('a dead status change says its key, team, status, reason, first try and receives', () => {
  const message: Message = {
    MessageId: 'm1',
    Body: JSON.stringify({ key: 'k1', status: 'bounced', events: [], team: 'billing' }),
    Attributes: { ApproximateReceiveCount: '3', SentTimestamp: String(NOW) },
    MessageAttributes: {
      status: string('bounced'),
      'idempotency-key': string('k1'),
      team: string('billing'),
      [CALLBACK_ATTRIBUTE.failure]: string('HTTP 404 Not Found: not retried'),
      [CALLBACK_ATTRIBUTE.firstTry]: string('2026-12-04T09:00:00.000Z'),
    },
  };
  const letter = describeCallbackLetter(message, NOW);
  expect(letter).toEqual({
    messageId: 'm1',
    key: 'k1',
    team: 'billing',
    status: 'bounced',
    // The id the function gave it (its report's), which the receiver saw and the table keeps.
    id: webhookId({ key: 'k1', status: 'bounced', events: [], team: 'billing' }),
    reason: 'HTTP 404 Not Found: not retried',
    firstTry: '2026-12-04T09:00:00.000Z',
    ageSeconds: 3600,
    receiveCount: 3,
  });
  expect(formatCallbackLetter(letter)).toBe(
    ` 60m  bounced        key=k1  team=billing  id=${letter.id}  first-try=2026-12-04T09:00:00.000Z  receives=3  HTTP 404 Not Found: not retried`,
  );
});

test('a dead replay names its webhook id and replay; one the redrive policy moved says so; bodies may be anything', () => {
  const replay = describeCallbackLetter(
    {
      Body: JSON.stringify({ replayOf: { key: 'k2', id: 'msg_1' } }),
      MessageAttributes: { [CALLBACK_ATTRIBUTE.replay]: string('r-1') },
      Attributes: { SentTimestamp: String(NOW - 5000) },
    },
    NOW,
  );
  expect(replay).toMatchObject({ key: 'k2', id: 'msg_1', replay: 'r-1', ageSeconds: 5 });
  expect(replay.reason).toContain('redrive policy after 100 receives');
  expect(formatCallbackLetter(replay)).toContain('id=msg_1  replay=r-1');
  expect(describeCallbackLetter({ Body: 'not json\u001b[2J' }, NOW)).toMatchObject({ receiveCount: 0 });
  const hostile = describeCallbackLetter({ Body: '{}', MessageAttributes: { team: string('a\nb\u202e') } }, NOW);
  expect(formatCallbackLetter(hostile)).not.toMatch(/[\n\u202e]/);
});

test('a selection takes the letters of any of its keys, of its team', () => {
  const letter = { messageId: 'm', key: 'k1', team: 'billing', reason: '', ageSeconds: 0, receiveCount: 0 };
  expect(selects(letter, {})).toBe(true);
  expect(selects(letter, { team: 'billing' })).toBe(true);
  expect(selects(letter, { team: 'sales' })).toBe(false);
  expect(selects(letter, { keys: ['k0', 'k1'] })).toBe(true);
  expect(selects(letter, { keys: ['k0'], team: 'billing' })).toBe(false);
  expect(selects({ ...letter, key: undefined } as never, { keys: ['k1'] })).toBe(false);
  expect(selects({ messageId: 'm', reason: '', ageSeconds: 0, receiveCount: 0 }, { team: 'billing' })).toBe(false);
});

test("a stored callback as a row: retrying until delivered or failed; the pipeline's team (*) unnamed", () => {
  const delivered = callbackRow({
    key: 'k1',
    id: 'msg_1',
    team: 'billing',
    status: 'sent',
    at: '2026-12-04T09:00:00.000Z',
    day: '2026-12-04',
    body: '{}',
    state: 'delivered',
    deliveredAt: '2026-12-04T09:00:01.000Z',
    attempts: 1,
    lastResult: 'HTTP 200',
  });
  expect(delivered).toEqual({
    key: 'k1',
    id: 'msg_1',
    team: 'billing',
    status: 'sent',
    at: '2026-12-04T09:00:00.000Z',
    state: 'delivered',
    attempts: 1,
    lastResult: 'HTTP 200',
    deliveredAt: '2026-12-04T09:00:01.000Z',
  });
  expect(formatCallbackRow(delivered)).toBe(
    '2026-12-04T09:00:00.000Z  sent           delivered  attempts=1  last=HTTP 200  delivered-at=2026-12-04T09:00:01.000Z  id=msg_1  team=billing  key=k1',
  );
  expect(callbackRow({ key: 'k', id: 'i', team: '*', body: '{}', attempts: 4 })).toEqual({
    key: 'k',
    id: 'i',
    state: 'retrying',
    attempts: 4,
  });
  // An index item (KEYS_ONLY) has no body: its state is not known from it.
  expect(callbackRow({ key: 'k', id: 'i', day: '2026-12-04', at: 'x' }).state).toBe('-');
});

test('--since spans the days from its own to today, none before the retention', () => {
  expect(daysSince('2026-12-02T23:00:00.000Z', NOW)).toEqual(['2026-12-02', '2026-12-03', '2026-12-04']);
  expect(daysSince('2026-12-04T09:59:00.000Z', NOW)).toEqual(['2026-12-04']);
  expect(daysSince('2026-12-05T00:00:00.000Z', NOW)).toEqual([]);
  const all = daysSince('2020-01-01T00:00:00.000Z', NOW);
  expect(all.length).toBe(CALLBACK_RETENTION_SECONDS / 86_400 + 2);
  expect(all.at(-1)).toBe('2026-12-04');
});

test('replay messages: ten to a batch, each naming its stored callback, all with the run id, a team its team', () => {
  const rows = Array.from({ length: 23 }, (_, i) => ({
    key: `k${i}`,
    id: `msg_${i}`,
    state: 'delivered',
    ...(i === 0 ? { team: 'billing' } : {}),
  }));
  const batches = replayBatches(rows, 'run-1');
  expect(batches.map((b) => b.length)).toEqual([10, 10, 3]);
  expect(batches[0]?.[0]).toEqual({
    Id: '0',
    MessageBody: '{"replayOf":{"key":"k0","id":"msg_0"}}',
    MessageAttributes: {
      'callback-replay': { DataType: 'String', StringValue: 'run-1' },
      team: { DataType: 'String', StringValue: 'billing' },
    },
  });
  expect(batches[2]?.[2]).toEqual({
    Id: '22',
    MessageBody: '{"replayOf":{"key":"k22","id":"msg_22"}}',
    MessageAttributes: { 'callback-replay': { DataType: 'String', StringValue: 'run-1' } },
  });
});
