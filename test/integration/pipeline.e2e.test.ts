/**
 * End to end on the emulators: SNS topic -> SQS queue -> consumer processes
 * running the real handler bundle -> DynamoDB Local -> SES emulator.
 */
import { down, onlyOperation, startFaultProxy } from '../../tools/dev/local/fault-proxy';
import { freePort } from '../../tools/dev/local/processes';
import { email, enqueue, receiveOne, startTestPipeline, until, type TestPipeline } from './support';

const running: TestPipeline[] = [];
async function pipelineFor(options: Parameters<typeof startTestPipeline>[0]): Promise<TestPipeline> {
  const p = await startTestPipeline(options);
  running.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});

async function drained(p: TestPipeline): Promise<boolean> {
  return p.pipeline.isDrained();
}

test('a published message arrives once in the SES mailbox', async () => {
  const p = await pipelineFor({});
  const to = p.address('alice');
  await p.publish(email(to, 'Welcome'));

  await until('the email and an empty queue', async () => (await p.emails()).length === 1 && (await drained(p)));
  const [sent] = await p.emails();
  expect(sent?.destination.to).toEqual([to]);
  expect(sent?.subject).toBe('Welcome');
  expect(sent?.from).toBe('noreply@example.com');
  expect(p.decisions('sent')).toHaveLength(1);
});

test('the same SNS envelope delivered several times to two consumers concurrently sends one email', async () => {
  const p = await pipelineFor({ consumers: [], settings: { batchSize: 1 } });
  await p.publish(email(p.address('bob')));
  // Take the real envelope off the queue; both pods are polling before it comes back six
  // times at once, as SNS may deliver it.
  const envelope = await receiveOne(p.pipeline, p.pipeline.resources.queueUrl);
  const body = envelope.Body ?? '';
  await Promise.all([p.pipeline.startConsumer({ name: 'pod-a' }), p.pipeline.startConsumer({ name: 'pod-b' })]);
  await Promise.all([1, 2, 3, 4, 5, 6].map(() => enqueue(p.pipeline, body)));

  await until(
    'every copy settled',
    async () => (await drained(p)) && p.decisions('sent').length + p.decisions('duplicate').length === 6,
  );
  expect(await p.emails()).toHaveLength(1);
  expect(p.decisions('sent')).toHaveLength(1);
  expect(p.decisions('duplicate')).toHaveLength(5);
  // The copies really were spread over both consumers.
  expect(new Set(p.decisions().map((d) => d.consumer)).size).toBe(2);
});

test('a publisher retry with the same idempotency key sends one email', async () => {
  const p = await pipelineFor({});
  const message = email(p.address('carol'), 'Receipt 42');
  const first = await p.publish(message, { key: 'order-42' });
  const second = await p.publish(message, { key: 'order-42' });
  expect(first).not.toBe(second);

  await until(
    'both deliveries settled',
    async () => (await drained(p)) && p.decisions().filter((d) => d.decision !== 'retry').length === 2,
  );
  expect(await p.emails()).toHaveLength(1);
  expect(p.decisions('duplicate')).toEqual([
    expect.objectContaining({ dedupeKey: 'order-42', keySource: 'attribute' }),
  ]);
});

test('a redelivery after the visibility timeout does not send again', async () => {
  // The consumer sends, then "dies" before deleting: the message comes back after the visibility timeout.
  const p = await pipelineFor({
    settings: { functionTimeoutSeconds: 1 },
    consumers: [{ env: { LOCAL_FAULT_SKIP_DELETE_BATCHES: '1' } }],
  });
  await p.publish(email(p.address('dave')));

  await until(
    'the redelivered copy is suppressed',
    async () => p.decisions('duplicate').length === 1 && (await drained(p)),
    30_000,
  );
  expect(await p.emails()).toHaveLength(1);
  const [sent] = p.decisions('sent');
  const [duplicate] = p.decisions('duplicate');
  expect(duplicate?.sqsMessageId).toBe(sent?.sqsMessageId);
  expect(duplicate?.receiveCount).toBe(2);
});

test('a batch whose every record fails and cannot be re-enqueued is retried whole, then each email is sent once', async () => {
  const p = await pipelineFor({ consumers: [], settings: { maxReceiveCount: 10 } });
  const recipients = ['e1', 'e2', 'e3'].map((label) => p.address(label));
  await Promise.all(recipients.map((to) => p.publish(email(to))));
  await until('all three queued', async () => (await p.pipeline.queueDepth()).visible === 3);

  // SES unreachable (nothing listens on that port): every record of the batch fails. And
  // SQS refuses the delayed copies, so each record stays on the queue with a backoff instead.
  const closedPort = await freePort();
  const sqsProxy = await startFaultProxy({
    target: p.endpoints.sqs,
    mode: onlyOperation('SendMessage', down()),
  });
  const broken = await p.pipeline.startConsumer({
    name: 'broken',
    env: {
      AWS_ENDPOINT_URL_SESV2: `http://127.0.0.1:${closedPort}`,
      AWS_ENDPOINT_URL_SQS: sqsProxy.endpoint,
      RETRY_BASE_SECONDS: '1',
    },
  });
  await until('a failed batch', () => p.pipeline.batches.length >= 1);
  await broken.stop();
  await sqsProxy.close();
  const [batch] = p.pipeline.batches;
  expect(batch?.size).toBe(3);
  expect(batch?.failed).toHaveLength(3);
  expect(batch?.invocationError).toMatch(/All records failed processing/);
  const retries = p.decisions('retry');
  expect(retries.length).toBeGreaterThanOrEqual(3);
  // A later batch may meet the circuit breaker, opened by the first: not sent either way.
  expect(retries.some((d) => d.errorCode === 'SesUnreachable')).toBe(true);
  expect(
    retries.every(
      (d) => (d.errorCode === 'SesUnreachable' || d.errorCode === 'CircuitOpen') && d.errorClass === 'retryable',
    ),
  ).toBe(true);
  expect(retries.every((d) => d.requeued === false)).toBe(true);
  expect(await p.emails()).toHaveLength(0);

  // Nothing was lost: a healthy consumer sends each one once.
  await p.pipeline.startConsumer({ name: 'healthy', env: { RETRY_BASE_SECONDS: '1' } });
  await until('all three sent', async () => (await p.emails()).length === 3 && (await drained(p)), 30_000);
  expect(p.decisions('sent').map((d) => d.consumer)).toEqual(['healthy', 'healthy', 'healthy']);
});
