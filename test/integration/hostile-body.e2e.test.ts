/**
 * Hostile bodies and keys end to end, published through SNS as a publisher would: a body nested
 * deep enough to overflow a recursive walk is dead-lettered at once as permanent (it used to be
 * retried for the whole retry budget), and Number keys are compared by their value.
 */
import { PublishCommand, type MessageAttributeValue } from '@aws-sdk/client-sns';
import type { Message } from '@aws-sdk/client-sqs';
import { drainQueue } from '../../tools/dev/local/queues';
import { addressedTo, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
beforeAll(async () => {
  p = await startTestPipeline();
});
afterAll(() => p?.stop());

async function publish(message: string, attributes?: Record<string, MessageAttributeValue>): Promise<string> {
  const { MessageId } = await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: p.pipeline.resources.topicArn,
      Message: message,
      ...(attributes ? { MessageAttributes: attributes } : {}),
    }),
  );
  return MessageId ?? '';
}

function attribute(message: Message | undefined, name: string): string | undefined {
  return message?.MessageAttributes?.[name]?.StringValue;
}

test('a body with template.data nested 5,000 levels deep is dead-lettered as permanent at once, within a minute', async () => {
  const to = p.address('deep');
  const data = `${'{"k":'.repeat(5000)}1${'}'.repeat(5000)}`;
  const snsMessageId = await publish(`{"to":${JSON.stringify(to)},"template":{"name":"welcome","data":${data}}}`);

  let letter: Message | undefined;
  await until(
    'the message in the DLQ',
    async () => {
      [letter] = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1, 1000);
      return letter !== undefined;
    },
    60_000,
  );

  expect({
    class: attribute(letter, 'error-class'),
    code: attribute(letter, 'error-code'),
    receiveCount: attribute(letter, 'receive-count'),
    snsMessageId: attribute(letter, 'sns-message-id'),
  }).toEqual({ class: 'permanent', code: 'InvalidMessage', receiveCount: '1', snsMessageId });
  expect(attribute(letter, 'error-reason')).toMatch(/^template\.data: is nested too deep: at most 32 levels/);
  expect(p.decisions('retry')).toEqual([]);
  expect(await p.emails()).toEqual([]);
});

test('Number idempotency keys written as 1e3, 1000 and 1000.0 (scaled to be unique) are one key: one email', async () => {
  const to = p.address('number');
  const n = String(100_000 + Math.floor(Math.random() * 900_000));
  const forms = [`${n}e3`, `${n}000`, `${n}000.0`];
  for (const value of forms) {
    await publish(JSON.stringify({ to, subject: 'Number key', text: 'T' }), {
      'idempotency-key': { DataType: 'Number', StringValue: value },
    });
  }

  const key = `${n}000`;
  await until(
    'three decisions for the key',
    async () =>
      p.decisions().filter((d) => d.dedupeKey === key && d.decision !== 'retry').length === forms.length &&
      (await p.pipeline.isDrained()),
  );

  expect(p.decisions('sent').filter((d) => d.dedupeKey === key)).toHaveLength(1);
  expect(p.decisions('duplicate').filter((d) => d.dedupeKey === key)).toHaveLength(2);
  expect(addressedTo(await p.emails(), to)).toHaveLength(1);
});
