/**
 * The rate lease on DynamoDB Local, the real slot store (send/slot-store.ts): its repair finds a lane
 * item no lease could have written, whatever its type, and replaces it with a write conditioned on
 * the very value it read, so a repair never undoes another container's lease; and a borrow takes a
 * lane's slots only once the lane's own sends have leased nothing for the grace, and a sibling's
 * borrow holds the lane, as DynamoDB itself evaluates the owner's write and the borrows' conditions.
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

test("the owner's lease records where it ended; a borrow waits the grace after it, then takes the idle lane", async () => {
  const lane = 'team:billing';
  const key = { id: { S: laneItemId(keyPrefix, lane) } };
  const now = Date.now();
  const own = await leaseSlots(store(), { ...request(now), lane });
  expect(own.slots).toEqual([now, now + 100, now + 200]);
  const { Item } = await clients.dynamodb.send(
    new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
  );
  expect(Item?.next).toEqual({ N: String(now + 300) });
  expect(Item?.owner).toEqual({ N: String(now + 300) });
  // The owner leases again on top (SET next = next + span, owner likewise, in one write).
  const again = await leaseSlots(store(), { ...request(now + 1), lane });
  expect(again).toEqual({ slots: [now + 300, now + 400, now + 500], next: now + 600, writes: 1 });
  // Just after its last slot, within the grace: a borrow is refused, and told until when.
  const borrow = (at: number) => leaseSlots(store(), { ...request(at), lane, latestStart: at, ownerGraceMs: 1000 });
  const early = await borrow(now + 650);
  expect(early).toMatchObject({ slots: [], busyUntil: now + 1600, writes: 1 });
  // Past the grace the lane is idle: the borrow restarts it from now and leaves owner as it was.
  const late = await borrow(now + 1700);
  expect(late.slots).toEqual([now + 1700, now + 1800, now + 1900]);
  const after = await clients.dynamodb.send(
    new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
  );
  expect(after.Item?.next).toEqual({ N: String(now + 2000) });
  expect(after.Item?.owner).toEqual({ N: String(now + 600) });
});

test("a sibling's borrow holds the lane: it borrows again at once, another lane waits the grace after it", async () => {
  const lane = 'high:security';
  const key = { id: { S: laneItemId(keyPrefix, lane) } };
  const now = Date.now();
  // security's high-priority mail leased last: its bulk mail (the sibling) waits the grace too.
  await leaseSlots(store(), { ...request(now), lane });
  const borrow = (at: number, holder?: 'team:security') =>
    leaseSlots(store(), {
      ...request(at),
      lane,
      latestStart: at,
      ownerGraceMs: 1000,
      ...(holder ? { holder } : {}),
    });
  expect(await borrow(now + 350, 'team:security')).toMatchObject({ slots: [], busyUntil: now + 1300 });
  // Past the grace the sibling takes it and holds it: owner and holder are its.
  const held = await borrow(now + 1400, 'team:security');
  expect(held.slots).toEqual([now + 1400, now + 1500, now + 1600]);
  const { Item } = await clients.dynamodb.send(
    new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
  );
  expect(Item?.owner).toEqual({ N: String(now + 1700) });
  expect(Item?.holder).toEqual({ S: 'team:security' });
  // Another team's borrow is refused the grace after the holder's; the holder borrows again at once.
  expect(await borrow(now + 1750)).toMatchObject({ slots: [], busyUntil: now + 2700 });
  expect((await borrow(now + 1760, 'team:security')).slots).toEqual([now + 1700, now + 1800, now + 1900]);
  // The lane's own mail leases whenever it comes, and takes the lane back from the holder.
  expect((await leaseSlots(store(), { ...request(now + 1770), lane })).slots).toEqual([
    now + 2000,
    now + 2100,
    now + 2200,
  ]);
  expect(await borrow(now + 2400, 'team:security')).toMatchObject({ slots: [] });
});
