/**
 * The operators' DLQ tools against the local pipeline: list without taking,
 * redrive without losing, purge.
 */
import { PublishCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { formatDeadLetter, listDeadLetters, purge, redrive } from '../../lib/dlq/dead-letters';
import { freePort } from '../../tools/dev/local/processes';
import { email, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
afterEach(() => p?.stop());

async function arn(queueUrl: string): Promise<string> {
  const { Attributes } = await p.pipeline.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? '';
}

async function dlqCount(): Promise<number> {
  const depth = await p.pipeline.queueDepth('dlq');
  return depth.visible + depth.inFlight;
}

test('list shows each dead letter with its reason and masked recipient, and leaves them in the DLQ', async () => {
  p = await startTestPipeline();
  const to = p.address('listed');
  await p.publish({ to, subject: 'Hi\r\nBcc: x@example.com', text: 'T' });
  await p.pipeline.sns.send(new PublishCommand({ TopicArn: p.pipeline.resources.topicArn, Message: 'not json' }));
  await until('two dead letters', async () => (await dlqCount()) === 2);

  const letters = await listDeadLetters(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl);
  expect(letters.map((l) => l.errorCode).sort()).toEqual(['InvalidJson', 'InvalidMessage']);
  const injection = letters.find((l) => l.errorCode === 'InvalidMessage');
  expect(injection?.recipient).toBe(`l***@${to.split('@')[1]}`);
  expect(injection?.reason).toMatch(/subject: must not contain CR or LF/);
  expect(formatDeadLetter(injection!)).not.toContain(to);
  // Listing took nothing: both are still there and visible again.
  await until('both visible again', async () => (await p.pipeline.queueDepth('dlq')).visible === 2);
});

test('redrive moves dead letters back without losing any, and the fixed pipeline sends each once', async () => {
  // A consumer that cannot reach SES retries until its (here short) retry budget is spent.
  const closed = await freePort();
  p = await startTestPipeline({
    settings: { maxReceiveCount: 5, retryBudgetSeconds: 3 },
    consumers: [{ name: 'broken', env: { AWS_ENDPOINT_URL_SESV2: `http://127.0.0.1:${closed}` } }],
  });
  const recipients = ['r1', 'r2', 'r3'].map((l) => p.address(l));
  await Promise.all(recipients.map((to) => p.publish(email(to))));
  await until('all three exhausted their receives', async () => (await dlqCount()) === 3, 45_000);
  await Promise.all(p.consumers.map((c) => c.stop()));

  const { pipeline } = p;
  const result = await redrive(pipeline.sqs, {
    dlqUrl: pipeline.resources.deadLetterQueueUrl,
    dlqArn: await arn(pipeline.resources.deadLetterQueueUrl),
    sourceQueueUrl: pipeline.resources.queueUrl,
    sourceQueueArn: await arn(pipeline.resources.queueUrl),
    copyOnly: true,
  });
  expect(result).toEqual({ moved: 3, mode: 'copy' });
  expect(await dlqCount()).toBe(0);

  await pipeline.startConsumer({ name: 'fixed' });
  await until('all three sent', async () => (await p.emails()).length === 3 && (await pipeline.isDrained()));
  expect((await p.emails()).map((e) => e.destination.to[0]).sort()).toEqual([...recipients].sort());
});

test('redrive --max moves only that many', async () => {
  p = await startTestPipeline({ consumers: [] });
  const { pipeline } = p;
  // Three bad messages: each is dead-lettered at once.
  const pod = await pipeline.startConsumer({ name: 'pod' });
  for (const label of ['m1', 'm2', 'm3']) await p.publish({ to: p.address(label), subject: '', text: 'T' });
  await until('three dead letters', async () => (await dlqCount()) === 3);
  await pod.stop();

  const result = await redrive(pipeline.sqs, {
    dlqUrl: pipeline.resources.deadLetterQueueUrl,
    dlqArn: await arn(pipeline.resources.deadLetterQueueUrl),
    sourceQueueUrl: pipeline.resources.queueUrl,
    sourceQueueArn: await arn(pipeline.resources.queueUrl),
    max: 2,
  });
  expect(result).toEqual({ moved: 2, mode: 'copy' });
  expect(await dlqCount()).toBe(1);
  expect((await pipeline.queueDepth('queue')).visible).toBe(2);
});

test('purge empties the DLQ', async () => {
  p = await startTestPipeline();
  await p.publish({ to: p.address('gone'), subject: '', text: 'T' });
  await until('a dead letter', async () => (await dlqCount()) === 1);
  await purge(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl);
  await until('the DLQ is empty', async () => (await dlqCount()) === 0);
});
