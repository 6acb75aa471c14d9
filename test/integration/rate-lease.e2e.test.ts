/**
 * A rate lease that heals, end to end: with the lane items of the shared rate lease (ids starting
 * `rate#` in the idempotency table) set to a slot in the year 33658, as a corrupted or hand-written
 * item might be, new emails are still mailed within a minute: the first lease that finds an item
 * replaces it, says so in a warning and counts it (RateLeaseRepairs).
 */
import { ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { LANES, METRIC } from '../../lambdas/kernel/names';
import { laneItemId } from '../../lambdas/send-email/send/slot-store';
import { email, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
afterAll(() => p?.stop());

const YEAR_33658 = Date.UTC(33658, 0, 1);

/** The ids of the lease items in the idempotency table. */
async function leaseItemIds(): Promise<string[]> {
  const { Items = [] } = await p.pipeline.dynamodb.send(
    new ScanCommand({
      TableName: p.pipeline.resources.tableName,
      FilterExpression: 'begins_with(id, :rate)',
      ExpressionAttributeValues: { ':rate': { S: 'rate#' } },
    }),
  );
  return Items.map((item) => item.id?.S ?? '');
}

test('with the rate lease items set far ahead (year 33658), five new emails are mailed within a minute', async () => {
  // A real rate, so that sends wait for lease slots.
  p = await startTestPipeline({ settings: { maxSendRate: 5 } });
  const first = p.address('first');
  await p.publish(email(first, 'Before'));
  await until('the first email mailed', async () => (await p.emails()).length === 1);

  // Both lanes' items, whether a lease wrote them yet or not, and any other `rate#` item there.
  const { idempotencyKeyPrefix } = p.pipeline.options.settings;
  const ids = new Set([...(await leaseItemIds()), ...LANES.map((lane) => laneItemId(idempotencyKeyPrefix, lane))]);
  expect(ids).toContain(laneItemId(idempotencyKeyPrefix, 'normal'));
  for (const id of ids) {
    await p.pipeline.dynamodb.send(
      new UpdateItemCommand({
        TableName: p.pipeline.resources.tableName,
        Key: { id: { S: id } },
        UpdateExpression: 'SET #next = :far',
        ExpressionAttributeNames: { '#next': 'next' },
        ExpressionAttributeValues: { ':far': { N: String(YEAR_33658) } },
      }),
    );
  }

  const started = Date.now();
  const recipients = [1, 2, 3, 4, 5].map((i) => p.address(`after-${i}`));
  await Promise.all(recipients.map((to, i) => p.publish(email(to, `After ${i}`))));
  await until(
    'five new emails mailed',
    async () => {
      const mailed = (await p.emails()).flatMap((e) => e.destination.to);
      return recipients.every((to) => mailed.includes(to));
    },
    60_000,
  );
  expect(Date.now() - started).toBeLessThan(60_000);
  expect(p.decisions('dead-lettered')).toEqual([]);

  // Said and counted: a warning naming what was found, and the RateLeaseRepairs metric.
  const warnings = p.pipeline.lines.filter((l) => String(l.json?.message).startsWith('rate lease item implausible'));
  expect(warnings.length).toBeGreaterThanOrEqual(1);
  expect(warnings[0]?.json).toEqual(
    expect.objectContaining({ level: 'WARN', message: 'rate lease item implausible: replaced' }),
  );
  expect(String(warnings[0]?.json?.found)).toContain(String(YEAR_33658));
  const repairs = p.pipeline.lines.filter((l) => typeof l.json?.[METRIC.rateLeaseRepairs] === 'number');
  expect(repairs.length).toBeGreaterThanOrEqual(1);
  // The normal lane's item holds a slot near now again.
  const { Items = [] } = await p.pipeline.dynamodb.send(
    new ScanCommand({
      TableName: p.pipeline.resources.tableName,
      FilterExpression: 'id = :id',
      ExpressionAttributeValues: { ':id': { S: laneItemId(idempotencyKeyPrefix, 'normal') } },
    }),
  );
  expect(Number(Items[0]?.next?.N)).toBeLessThan(Date.now() + 60_000);
});
