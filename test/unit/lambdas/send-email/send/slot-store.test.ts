/**
 * The rate lease's store (send/slot-store.ts) on a recorded client: the item each lane writes, the
 * three conditional UpdateItem writes as DynamoDB receives them (an owner's and a borrow's), and what a failed condition answers
 * (the value found, whatever its type). Their semantics on DynamoDB Local:
 * test/integration/rate-lease.dynamodb.test.ts.
 */
import { ConditionalCheckFailedException, type AttributeValue, type UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbSlotStore, laneItemId, type UpdateClient } from '../../../../../lambdas/send-email/send/slot-store';

const NOW = 1_700_000_000_000;
const EXPIRATION = String(Math.floor(NOW / 1000) + 24 * 60 * 60);

/** A client that records each command and answers with `answer`. */
function recorded(answer: (command: UpdateItemCommand) => { Attributes?: Record<string, AttributeValue> }) {
  const sent: UpdateItemCommand[] = [];
  const client: UpdateClient = {
    send: async (command) => {
      sent.push(command);
      return answer(command);
    },
  };
  return {
    sent,
    store: dynamoDbSlotStore({ client, tableName: 'idempotency', keyPrefix: 'email-pipeline', now: () => NOW }),
  };
}

/** DynamoDB's answer to a failed condition, with the item as it was (ReturnValuesOnConditionCheckFailure). */
function conditionFailed(next?: AttributeValue): never {
  throw new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: next === undefined ? { id: { S: 'rate#email-pipeline#normal' } } : { next },
  });
}

test("lanes have items of their own, apart from Powertools' records", () => {
  expect(laneItemId('email-pipeline', 'high')).toBe('rate#email-pipeline#high');
  expect(laneItemId('email-pipeline', 'normal')).toBe('rate#email-pipeline#normal');
  expect(laneItemId('email-pipeline', 'team:billing')).toBe('rate#email-pipeline#team:billing');
});

test("advance, the owner's: next and owner both move on by the span while next lies within bounds, whole milliseconds, the TTL renewed, the lane the holder", async () => {
  const { sent, store } = recorded(() => ({ Attributes: { next: { N: String(NOW + 1200) } } }));
  expect(await store.advance('high', 200, NOW - 500.4, NOW + 999.6)).toEqual({ ok: true, next: NOW + 1200 });
  expect(sent.map((c) => c.input)).toEqual([
    {
      TableName: 'idempotency',
      Key: { id: { S: 'rate#email-pipeline#high' } },
      UpdateExpression: 'SET #next = #next + :span, #owner = #next + :span, #holder = :holder, #exp = :exp',
      ConditionExpression: '#next BETWEEN :lower AND :upper',
      ExpressionAttributeNames: { '#next': 'next', '#exp': 'expiration', '#owner': 'owner', '#holder': 'holder' },
      ExpressionAttributeValues: {
        ':exp': { N: EXPIRATION },
        ':holder': { S: 'high' },
        ':span': { N: '200' },
        ':lower': { N: String(NOW - 500) },
        ':upper': { N: String(NOW + 1000) },
      },
      ReturnValues: 'UPDATED_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  ]);
});

test('a borrow: ADD to next only while the owner has leased nothing since idleBefore, owner left as it is', async () => {
  const { sent, store } = recorded(() => ({ Attributes: { next: { N: String(NOW + 300) } } }));
  expect(await store.advance('team:billing', 300, NOW - 500, NOW, NOW - 1000)).toEqual({ ok: true, next: NOW + 300 });
  expect(await store.restart('team:billing', NOW + 300, NOW - 500, NOW - 1000)).toEqual({ ok: true, next: NOW + 300 });
  expect(sent.map((c) => c.input)).toMatchObject([
    {
      Key: { id: { S: 'rate#email-pipeline#team:billing' } },
      UpdateExpression: 'ADD #next :span SET #exp = :exp',
      ConditionExpression: '#next BETWEEN :lower AND :upper AND (attribute_not_exists(#owner) OR #owner < :idle)',
      ExpressionAttributeNames: { '#next': 'next', '#exp': 'expiration', '#owner': 'owner' },
      ExpressionAttributeValues: { ':idle': { N: String(NOW - 1000) } },
    },
    {
      UpdateExpression: 'SET #next = :value, #exp = :exp',
      ConditionExpression:
        '(attribute_not_exists(#next) OR #next < :before) AND (attribute_not_exists(#owner) OR #owner < :idle)',
    },
  ]);
});

test("restart, the owner's: SET next and owner when the item has none or a stale one", async () => {
  const { sent, store } = recorded(() => ({ Attributes: { next: { N: String(NOW + 94) } } }));
  expect(await store.restart('normal', NOW + 94, NOW - 500)).toEqual({ ok: true, next: NOW + 94 });
  expect(sent[0]!.input).toMatchObject({
    Key: { id: { S: 'rate#email-pipeline#normal' } },
    UpdateExpression: 'SET #next = :value, #owner = :value, #holder = :holder, #exp = :exp',
    ConditionExpression: '(attribute_not_exists(#next) OR #next < :before)',
    ExpressionAttributeValues: {
      ':value': { N: String(NOW + 94) },
      ':before': { N: String(NOW - 500) },
      ':holder': { S: 'normal' },
    },
  });
});

test("a holding borrow (the lane's sibling): also while it holds the item itself, and it records owner and holder as the owner does", async () => {
  const { sent, store } = recorded(() => ({ Attributes: { next: { N: String(NOW + 300) } } }));
  expect(await store.advance('high:security', 300, NOW - 500, NOW, NOW - 1000, 'team:security')).toEqual({
    ok: true,
    next: NOW + 300,
  });
  expect(await store.restart('high:security', NOW + 300, NOW - 500, NOW - 1000, 'team:security')).toEqual({
    ok: true,
    next: NOW + 300,
  });
  const held = '(attribute_not_exists(#owner) OR #owner < :idle OR #holder = :holder)';
  expect(sent.map((c) => c.input)).toMatchObject([
    {
      Key: { id: { S: 'rate#email-pipeline#high:security' } },
      UpdateExpression: 'SET #next = #next + :span, #owner = #next + :span, #holder = :holder, #exp = :exp',
      ConditionExpression: `#next BETWEEN :lower AND :upper AND ${held}`,
      ExpressionAttributeNames: { '#next': 'next', '#exp': 'expiration', '#owner': 'owner', '#holder': 'holder' },
      ExpressionAttributeValues: { ':idle': { N: String(NOW - 1000) }, ':holder': { S: 'team:security' } },
    },
    {
      UpdateExpression: 'SET #next = :value, #owner = :value, #holder = :holder, #exp = :exp',
      ConditionExpression: `(attribute_not_exists(#next) OR #next < :before) AND ${held}`,
      ExpressionAttributeValues: { ':holder': { S: 'team:security' } },
    },
  ]);
});

test.each<[string, unknown, AttributeValue]>([
  ['a number read back', 5e15, { N: '5000000000000000' }],
  ['a string, as a failed write returned it', { S: 'soon' }, { S: 'soon' }],
])('repair: SET next only if it still holds the very value read (%s)', async (_, found, expected) => {
  const { sent, store } = recorded(() => ({ Attributes: { next: { N: String(NOW + 94) } } }));
  expect(await store.repair('normal', found, NOW + 94)).toEqual({ ok: true, next: NOW + 94 });
  expect(sent[0]!.input).toMatchObject({
    UpdateExpression: 'SET #next = :value, #exp = :exp',
    ConditionExpression: '#next = :found',
    ExpressionAttributeValues: { ':value': { N: String(NOW + 94) }, ':found': expected },
  });
});

test.each<[string, AttributeValue | undefined, object]>([
  [
    'a number: next and found',
    { N: '1700000009000' },
    { ok: false, next: 1_700_000_009_000, found: { N: '1700000009000' } },
  ],
  ['another type: found only', { S: 'soon' }, { ok: false, found: { S: 'soon' } }],
  ['no next: nothing', undefined, { ok: false }],
])('a failed condition answers what the item held, not an error (%s)', async (_, held, expected) => {
  const { store } = recorded(() => conditionFailed(held));
  expect(await store.advance('normal', 100, NOW - 500, NOW + 1000)).toEqual(expected);
});

test("a failed borrow answers the end of the owner's last lease too, and who wrote it", async () => {
  const { store } = recorded(() => {
    throw new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
      Item: { next: { N: String(NOW - 50) }, owner: { N: String(NOW - 50) }, holder: { S: 'team:billing' } },
    });
  });
  expect(await store.advance('team:billing', 100, NOW - 500, NOW, NOW - 1000)).toEqual({
    ok: false,
    next: NOW - 50,
    found: { N: String(NOW - 50) },
    owner: NOW - 50,
    holder: 'team:billing',
  });
});

test('any other error is thrown: the pacer falls back to its static share', async () => {
  const { store } = recorded(() => {
    throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'TimeoutError' });
  });
  await expect(store.advance('normal', 100, NOW - 500, NOW + 1000)).rejects.toThrow('ECONNREFUSED');
});
