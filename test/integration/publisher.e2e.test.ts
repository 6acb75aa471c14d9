/**
 * The publisher client against the emulators: what it publishes is mailed once, a batch with one
 * key twice is one email, and what it refuses never reaches the topic.
 */
import { EmailPublisher, InvalidMessageError } from '../../lib/publisher';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../lib/cli/target';
import { addressedTo, sleep, startTestPipeline, uniqueName, until, type TestPipeline } from './support';

let p: TestPipeline;
let publisher: EmailPublisher;

beforeAll(async () => {
  // With the send ledger, a send whose answer was lost (a slow SES) is confirmed by its SES event, not resent.
  p = await startTestPipeline({ ledger: true });
  // Built from configuration, as a publisher in another service would.
  publisher = new EmailPublisher({
    topicArn: p.pipeline.resources.topicArn,
    sns: { endpoint: p.endpoints.sns, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
  });
});
afterAll(async () => {
  publisher?.destroy();
  await p?.stop();
});

/** Waits until every copy of `key` was settled (sent, suppressed or dead-lettered), then returns the emails to `to`. */
async function settled(key: string, copies: number, to: string) {
  await until(
    `${copies} decision(s) for ${key}`,
    () => p.decisions().filter((d) => d.dedupeKey === key && d.decision !== 'retry').length === copies,
  );
  return addressedTo(await p.emails(), to);
}

test('an email published with a key is mailed once', async () => {
  const to = p.address('single');
  const key = uniqueName('order');

  const published = await publisher.publish(
    { to, subject: 'Your order', text: 'It shipped.' },
    { idempotencyKey: key },
  );

  expect(published.dedupeKey).toBe(key);
  const mailed = await settled(key, 1, to);
  expect(mailed).toHaveLength(1);
  expect(mailed[0]?.subject).toBe('Your order');
  expect(p.decisions('sent').filter((d) => d.dedupeKey === key)).toHaveLength(1);
});

test('a batch with the same key twice is one email, and every other entry is mailed', async () => {
  const twice = p.address('twice');
  const other = p.address('other');
  const key = uniqueName('batch');
  const otherKey = uniqueName('batch-other');

  const result = await publisher.publishBatch([
    { message: { to: twice, subject: 'Once', text: 'Only one of these.' }, idempotencyKey: key },
    { message: { to: other, subject: 'Other', text: 'Another email.' }, idempotencyKey: otherKey },
    { message: { to: twice, subject: 'Once', text: 'Only one of these.' }, idempotencyKey: key },
  ]);

  expect(result).toMatchObject({ published: 3, failed: 0 });
  expect(await settled(key, 2, twice)).toHaveLength(1);
  expect(p.decisions('duplicate').filter((d) => d.dedupeKey === key)).toHaveLength(1);
  expect(await settled(otherKey, 1, other)).toHaveLength(1);
});

test('a message the pipeline would refuse is refused before it reaches the topic', async () => {
  const before = p.decisions('dead-lettered').length;

  await expect(
    publisher.publish({ to: p.address('refused'), subject: 'Hi\r\nBcc: x@example.com', text: 'T' }),
  ).rejects.toBeInstanceOf(InvalidMessageError);

  const batch = await publisher.publishBatch([{ message: { to: 'nobody', subject: 'S', text: 'T' } }]);
  expect(batch.results[0]).toMatchObject({ ok: false, error: { code: 'InvalidMessage' } });
  // A bad copy that reached the queue would be dead-lettered within a second or two.
  await sleep(2000);
  expect(p.decisions('dead-lettered')).toHaveLength(before);
});
