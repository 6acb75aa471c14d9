/**
 * The ledger store's writes of a team's key: the team (`team`, `teamKey`) rides on the write the
 * event makes anyway, set only where the item has none, on the append and on the merge alike, and
 * on the dead-letter mark and the pipeline's own events; a key without a team gets neither. (Every arrival order against DynamoDB Local: the integration suite.)
 */
import {
  ConditionalCheckFailedException,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ParsedSesEvent } from '../../../../lambdas/kernel/ledger/events';
import { markDeadLettered, recordEvent, recordPipelineEvent } from '../../../../lambdas/runtime/ledger-store';

const KEY = 'sha256-0f0e';

function event(type: 'Send' | 'Delivery', at: string, tags: { team?: string; teamKey?: string } = {}): ParsedSesEvent {
  return {
    key: KEY,
    status: type === 'Send' ? 'sent' : 'delivered',
    id: `${type}#ses-1#${at}`,
    event: { type, at, sesMessageId: 'ses-1' },
    ...tags,
    origin: {},
  };
}

/** A client that answers each command with the next answer, keeping what it was sent. */
function client(...answers: ((command: unknown) => unknown)[]) {
  const sent: unknown[] = [];
  const db = {
    send: (command: unknown) => {
      sent.push(command);
      const answer = answers.shift();
      if (!answer) throw new Error('unexpected request');
      return Promise.resolve().then(() => answer(command));
    },
  } as unknown as Pick<DynamoDBClient, 'send'>;
  return { db, sent };
}

/** The attributes an UpdateItem's SET clause writes, by name, with the value each is set from. */
function setClause(command: UpdateItemCommand): Record<string, string> {
  const input = command.input;
  const names = input.ExpressionAttributeNames ?? {};
  const set = /^SET (.*?)(?: REMOVE | ADD |$)/.exec(input.UpdateExpression ?? '')?.[1] ?? '';
  return Object.fromEntries(
    set.split(/, (?=#)/).map((part) => {
      const [name = '', value = ''] = part.split(' = ');
      return [names[name] ?? name, value];
    }),
  );
}

const valuesOf = (command: UpdateItemCommand) => unmarshall(command.input.ExpressionAttributeValues ?? {});

test("a team's Send writes its team and key as written, in its one UpdateItem, only where the item has none", async () => {
  const { db, sent } = client(() => ({ Attributes: marshall({ key: KEY }) }));
  const result = await recordEvent(
    db,
    'ledger',
    event('Send', '2026-12-03T10:00:00.000Z', { team: 'billing', teamKey: 'order-42' }),
    3600,
  );
  expect(result.requests).toBe(1);
  expect(sent).toHaveLength(1);
  const update = sent[0] as UpdateItemCommand;
  expect(update).toBeInstanceOf(UpdateItemCommand);
  expect(setClause(update)).toMatchObject({
    team: 'if_not_exists(#team, :team)',
    teamKey: 'if_not_exists(#teamKey, :teamKey)',
  });
  expect(valuesOf(update)).toMatchObject({ ':team': 'billing', ':teamKey': 'order-42' });
});

test('a team without its key as written (it did not fit a tag) writes the team alone', async () => {
  const { db, sent } = client(() => ({ Attributes: marshall({ key: KEY }) }));
  await recordEvent(db, 'ledger', event('Send', '2026-12-03T10:00:00.000Z', { team: 'billing' }), 3600);
  const update = sent[0] as UpdateItemCommand;
  expect(setClause(update)).toHaveProperty('team');
  expect(setClause(update)).not.toHaveProperty('teamKey');
  expect(valuesOf(update)).not.toHaveProperty(':teamKey');
});

test('a key without a team writes no team', async () => {
  const { db, sent } = client(() => ({ Attributes: marshall({ key: KEY }) }));
  await recordEvent(db, 'ledger', event('Send', '2026-12-03T10:00:00.000Z'), 3600);
  const update = sent[0] as UpdateItemCommand;
  expect(Object.values(update.input.ExpressionAttributeNames ?? {})).not.toContain('team');
  expect(update.input.UpdateExpression).not.toContain('team');
});

test('an event merged out of order writes the team with the merged item, and keeps a team already there', async () => {
  const refused = (item: Record<string, unknown>) => () => {
    throw new ConditionalCheckFailedException({ message: 'condition', $metadata: {}, Item: marshall(item) });
  };
  const later = { type: 'Delivery', at: '2026-12-03T10:00:05.000Z', sesMessageId: 'ses-1' };
  const old = { key: KEY, events: [later], version: 1, lastAt: later.at, statusRank: 2, eventIds: new Set(['x']) };
  const send = event('Send', '2026-12-03T10:00:00.000Z', { team: 'billing', teamKey: 'order-42' });

  const first = client(refused(old), () => ({}));
  expect((await recordEvent(first.db, 'ledger', send, 3600)).requests).toBe(2);
  const put = first.sent[1] as PutItemCommand;
  expect(put).toBeInstanceOf(PutItemCommand);
  expect(unmarshall(put.input.Item ?? {})).toMatchObject({ team: 'billing', teamKey: 'order-42', status: 'delivered' });

  const teamed = client(refused({ ...old, team: 'security', teamKey: 'k-1' }), () => ({}));
  await recordEvent(teamed.db, 'ledger', send, 3600);
  const kept = unmarshall((teamed.sent[1] as PutItemCommand).input.Item ?? {});
  expect(kept).toMatchObject({ team: 'security', teamKey: 'k-1' });

  const bare = client(refused(old), () => ({}));
  await recordEvent(bare.db, 'ledger', event('Send', '2026-12-03T10:00:00.000Z'), 3600);
  const none = unmarshall((bare.sent[1] as PutItemCommand).input.Item ?? {});
  expect(none).not.toHaveProperty('team');
  expect(none).not.toHaveProperty('teamKey');
});

test("the dead-letter mark and the pipeline's own events name a team's key's team in their one UpdateItem", async () => {
  const team = { team: 'billing', teamKey: 'order-42' };
  const mark = { at: '2026-12-03T10:00:00.000Z', code: 'SenderNotAllowed', reason: 'from' };
  const dead = client(() => ({ Attributes: marshall({ version: 1 }) }));
  await markDeadLettered(dead.db, 'ledger', KEY, mark, 3600, team);
  const cancelled = client(() => ({}));
  const event = { type: 'Cancelled', at: mark.at };
  await recordPipelineEvent(cancelled.db, 'ledger', KEY, event, { status: 'cancelled', over: [] }, 3600, team);
  for (const sent of [dead.sent, cancelled.sent]) {
    expect(sent).toHaveLength(1);
    const update = sent[0] as UpdateItemCommand;
    expect(setClause(update)).toMatchObject({
      team: 'if_not_exists(#team, :team)',
      teamKey: 'if_not_exists(#teamKey, :teamKey)',
    });
    expect(valuesOf(update)).toMatchObject({ ':team': 'billing', ':teamKey': 'order-42' });
  }

  const bare = client(() => ({ Attributes: marshall({ version: 1 }) }));
  await markDeadLettered(bare.db, 'ledger', KEY, mark, 3600);
  expect((bare.sent[0] as UpdateItemCommand).input.UpdateExpression).not.toContain('team');
});
