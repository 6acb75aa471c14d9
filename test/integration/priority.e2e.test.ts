/**
 * Priority by permission, end to end on the emulators: the local stack has the deployed topology,
 * a high-priority topic that alone feeds the high-priority queue. A message published there is sent
 * by the high lane, once; a message on the topic with a `priority: high` attribute (which any
 * publisher may set) is an ordinary message, sent by the normal lane, once, and never queued twice.
 */
import { PublishCommand } from '@aws-sdk/client-sns';
import { addressedTo, email, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
beforeAll(async () => {
  p = await startTestPipeline({ consumers: [{}, { lane: 'high', name: 'high-1' }] });
}, 60_000);
afterAll(() => p?.stop());

/** Publishes one email under `key` to `topicArn`, with extra message attributes. */
async function publish(topicArn: string, key: string, to: string, extra: Record<string, string> = {}) {
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: topicArn,
      Message: JSON.stringify(email(to)),
      MessageAttributes: {
        'idempotency-key': { DataType: 'String', StringValue: key },
        ...Object.fromEntries(
          Object.entries(extra).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
        ),
      },
    }),
  );
}

const decisionsOf = (key: string) => p.decisions().filter((d) => d.dedupeKey === key);

test('a message published to the high-priority topic is sent once, by the high lane', async () => {
  const key = `urgent-${p.name}`;
  const to = p.address('urgent');
  await publish(p.pipeline.resources.highPriorityTopicArn, key, to);
  await until('sent', () => decisionsOf(key).some((d) => d.decision === 'sent'));
  await until('drained', () => p.pipeline.isDrained());
  expect(decisionsOf(key).map((d) => [d.decision, d.consumer])).toEqual([['sent', 'high-1']]);
  expect(addressedTo(await p.emails(), to)).toHaveLength(1);
});

test('a priority attribute on the topic buys nothing: the normal lane sends it, once, and the high lane never sees it', async () => {
  const key = `claims-high-${p.name}`;
  const to = p.address('claims-high');
  await publish(p.pipeline.resources.topicArn, key, to, { priority: 'high' });
  await until('sent', () => decisionsOf(key).some((d) => d.decision === 'sent'));
  await until('drained', () => p.pipeline.isDrained());
  // One decision, by a consumer of the work queue: no copy reached the high-priority queue.
  expect(decisionsOf(key).map((d) => [d.decision, d.consumer])).toEqual([['sent', 'pod-1']]);
  expect(addressedTo(await p.emails(), to)).toHaveLength(1);
});
