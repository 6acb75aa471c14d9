/**
 * The rate lease's repair on DynamoDB Local: the real slot store (send/slot-store.ts) finds a lane
 * item no lease could have written, whatever its type, and replaces it with a write conditioned on
 * the very value it read, so a repair never undoes another container's lease.
 */
import { GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { maxLeaseAheadMs } from '../../lambdas/send-email/send/pacing-policy';
import { leaseSlots, type LeaseRequest } from '../../lambdas/send-email/send/rate-lease';
import { dynamoDbSlotStore, laneItemId } from '../../lambdas/send-email/send/slot-store';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { createResources } from '../../tools/dev/local/resources';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { endpointsFromEnv, uniqueName } from './support';

const clients = emulatorClients(endpointsFromEnv());
const settings = loadLocalSettings();
let tableName: string;
const keyPrefix = settings.idempotencyKeyPrefix;

beforeAll(async () => {
  tableName = (await createResources(clients, settings, uniqueName('lease'))).tableName;
});
afterAll(() => clients.destroy());

const store = () => dynamoDbSlotStore({ client: clients.dynamodb, tableName, keyPrefix });

async function putNext(next: AttributeValue): Promise<void> {
  await clients.dynamodb.send(
    new PutItemCommand({ TableName: tableName, Item: { id: { S: laneItemId(keyPrefix, 'normal') }, next } }),
  );
}

async function storedNext(): Promise<AttributeValue | undefined> {
  const { Item } = await clients.dynamodb.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { id: { S: laneItemId(keyPrefix, 'normal') } },
      ConsistentRead: true,
    }),
  );
  return Item?.next;
}

function request(now: number): LeaseRequest {
  return {
    lane: 'normal',
    count: 3,
    intervalMs: 100,
    now,
    lagMs: 500,
    latestStart: now + 500,
    maxAheadMs: maxLeaseAheadMs(100),
  };
}

test.each<[string, AttributeValue]>([
  ['a slot in the year 33658', { N: String(Date.UTC(33658, 0, 1)) }],
  ['a number with 38 digits', { N: '99999999999999999999999999999999999999' }],
  ['a negative number', { N: '-1' }],
  ['a string', { S: '1764000000000' }],
  ['a boolean', { BOOL: true }],
  ['a null', { NULL: true }],
  ['a map', { M: { next: { N: '1' } } }],
  ['a list', { L: [{ N: '1' }] }],
])('an item holding %s is replaced by the lease that finds it, which gets its slots from now', async (_, bad) => {
  await putNext(bad);
  const now = Date.now();
  const lease = await leaseSlots(store(), request(now));
  expect(lease.repaired).toBe(true);
  expect(lease.implausible).toEqual(expect.any(String));
  expect(lease.slots).toEqual([now, now + 100, now + 200]);
  expect(await storedNext()).toEqual({ N: String(now + 300) });
  // The lane works on as usual: the next lease continues where that one ended, with one write.
  const next = await leaseSlots(store(), request(now + 10));
  expect(next).toEqual({ slots: [now + 300, now + 400, now + 500], next: now + 600, writes: 1 });
});

test('a repair names the value it read: once the item holds another, the repair changes nothing', async () => {
  await putNext({ S: 'bad' });
  const later = Date.now() + 200;
  await putNext({ N: String(later) }); // another container repaired and leased in between
  const write = await store().repair('normal', { S: 'bad' }, Date.now());
  expect(write).toEqual({ ok: false, next: later, found: { N: String(later) } });
  expect(await storedNext()).toEqual({ N: String(later) });
});
