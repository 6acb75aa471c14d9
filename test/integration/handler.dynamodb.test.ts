/**
 * The handler's dedupe against DynamoDB Local: real conditional writes, real
 * Powertools idempotency. SES is faked at the SDK level (a client whose send
 * counts calls), so the number of sends can be asserted exactly.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { handlerEnvironment } from '../../lib/construct/handler-env';
import { emulatorConfig } from '../../tools/dev/local/emulator-config';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { makeContext, toSqsRecord } from '../../tools/dev/local/event-source';
import { drainQueue } from '../../tools/dev/local/queues';
import { RETRY_ATTRIBUTE } from '../../lambdas/kernel/names';
import { queueRecord, snsEnvelope } from '../../tools/dev/local/records';
import { createResources, handlerRefs, type LocalResources } from '../../tools/dev/local/resources';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { createStoreClient } from '../../lambdas/runtime/clients';
import { createHandler } from '../../lambdas/send-email/handler';
import { createAttachmentObjects, type ObjectStore } from '../../lambdas/send-email/testing';
import { readSettings } from '../../lambdas/kernel/environment';
import { endpointsFromEnv, sleep, uniqueName } from './support';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const endpoints = endpointsFromEnv();
const clients = emulatorClients(endpoints);
const { sqs } = clients;
// The store's client as the handler builds it (clients.ts: cached middleware, shared by concurrent sends).
const dynamodb = createStoreClient(emulatorConfig(endpoints.dynamodb));
const settings = loadLocalSettings();

let resources: LocalResources;
beforeAll(async () => {
  resources = await createResources(clients, settings, uniqueName('handler'));
});
afterAll(() => {
  clients.destroy();
  dynamodb.destroy();
});

/** An SES client stand-in: counts sends, takes a little time like the real one. */
class CountingSes {
  readonly sent: SendEmailCommand[] = [];
  /** When set, a send waits for it: holds the winner "in progress" while the others try. */
  gate: Promise<void> | undefined;
  async send(command: SendEmailCommand): Promise<{ MessageId: string }> {
    await (this.gate ?? sleep(20));
    this.sent.push(command);
    return { MessageId: `ses-${this.sent.length}` };
  }
}

/** A DynamoDB client whose next `n` UpdateItem calls (completion writes) fail as if the store were down. */
function flakyDynamoDb(failures: { updates: number }): DynamoDBClient {
  const client = createStoreClient({ ...emulatorConfig(endpoints.dynamodb), maxAttempts: 1 });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateItemCommand' && failures.updates > 0) {
        failures.updates -= 1;
        throw Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectStoreOutage' },
  );
  return client;
}

/** An attachments bucket stand-in: objects by key, each with its ETag. */
class FakeBucket implements ObjectStore {
  readonly objects = new Map<string, { etag: string; bytes: Uint8Array }>();
  put(key: string, text: string): void {
    this.objects.set(key, { etag: `"${randomUUID()}"`, bytes: Buffer.from(text) });
  }
  async head(key: string) {
    const object = this.objects.get(key);
    if (!object) throw Object.assign(new Error('Not Found'), { name: 'NotFound', $metadata: { httpStatusCode: 404 } });
    return { etag: object.etag, size: object.bytes.length };
  }
  async get(key: string, etag: string) {
    const object = this.objects.get(key);
    if (object?.etag !== etag) throw Object.assign(new Error('Precondition'), { $metadata: { httpStatusCode: 412 } });
    return object.bytes;
  }
}

/** One handler instance: what one Lambda container holds. */
function newHandler(ses: CountingSes, client: DynamoDBClient = dynamodb, bucket?: FakeBucket) {
  return createHandler({
    ...(bucket ? { attachments: createAttachmentObjects(bucket) } : {}),
    settings: readSettings(handlerEnvironment(settings, handlerRefs(resources))),
    ses,
    sqs,
    persistenceStore: new DynamoDBPersistenceLayer({ tableName: resources.tableName, awsSdkV3Client: client }),
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Test', serviceName: 'test' }),
    random: () => 0,
  });
}

function record(message: object, options: { snsMessageId?: string; key?: string } = {}): SQSRecord {
  const envelope = snsEnvelope(message, {
    topicArn: resources.topicArn,
    ...(options.snsMessageId !== undefined ? { messageId: options.snsMessageId } : {}),
    ...(options.key !== undefined ? { key: options.key } : {}),
  });
  return queueRecord(JSON.stringify(envelope), resources.queueArn);
}

/** Invokes as the event source does: a thrown invocation means every record is retried. */
async function invoke(
  handler: ReturnType<typeof newHandler>,
  records: SQSRecord[],
  timeoutMs = 30_000,
): Promise<SQSBatchResponse> {
  try {
    return await handler({ Records: records }, makeContext('test', timeoutMs));
  } catch {
    return { batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) };
  }
}

const message = (to: string) => ({ to, subject: 'Hello', text: 'Once only.' });

test('the same SNS MessageId twice in one batch sends once', async () => {
  const ses = new CountingSes();
  const snsMessageId = randomUUID();
  const response = await invoke(newHandler(ses), [
    record(message('a@example.com'), { snsMessageId }),
    record(message('a@example.com'), { snsMessageId }),
  ]);
  expect(ses.sent).toHaveLength(1);
  expect(response.batchItemFailures).toEqual([]);
});

test('the same SNS MessageId in two batches sends once', async () => {
  const ses = new CountingSes();
  const snsMessageId = randomUUID();
  await invoke(newHandler(ses), [record(message('b@example.com'), { snsMessageId })]);
  const second = await invoke(newHandler(ses), [record(message('b@example.com'), { snsMessageId })]);
  expect(ses.sent).toHaveLength(1);
  expect(second.batchItemFailures).toEqual([]);
});

test('20 concurrent invocations with the same key send exactly once, and their retries send nothing more', async () => {
  const ses = new CountingSes();
  const key = `order-${randomUUID()}`;
  const records = Array.from({ length: 20 }, () => record(message('c@example.com'), { key }));
  // The winner's send is held until the 19 others have come back, so every one of them
  // meets the claim while it is still in progress: the hardest case for the store.
  let settled = 0;
  let release: () => void = () => undefined;
  ses.gate = new Promise<void>((resolve) => (release = resolve));
  const responses = await Promise.all(
    records.map((r) =>
      invoke(newHandler(ses), [r]).finally(() => {
        settled += 1;
        if (settled === 19) release();
      }),
    ),
  );
  expect(ses.sent).toHaveLength(1);
  // The 19 went back to the queue as delayed copies (retry attempt 1); the records themselves are done.
  expect(responses.flatMap((r) => r.batchItemFailures)).toEqual([]);
  const copies = (await drainQueue(sqs, resources.queueUrl, 19, 20_000)).filter((m) => m.Body?.includes(key));
  expect(copies).toHaveLength(19);
  expect(copies.map((m) => m.MessageAttributes?.[RETRY_ATTRIBUTE.attempt]?.StringValue)).toEqual(copies.map(() => '1'));

  // The copies find the completed record: duplicates, nothing sent.
  ses.gate = undefined;
  const again = await Promise.all(
    copies.map((m) => invoke(newHandler(ses), [toSqsRecord(m, resources.queueArn, 'us-east-1')])),
  );
  expect(again.flatMap((r) => r.batchItemFailures)).toEqual([]);
  expect(ses.sent).toHaveLength(1);
});

test('a different email under a used key is not sent and goes to the DLQ with its reason', async () => {
  const ses = new CountingSes();
  const key = `invoice-${randomUUID()}`;
  await invoke(newHandler(ses), [record(message('d@example.com'), { key })]);
  const response = await invoke(newHandler(ses), [record(message('someone-else@example.com'), { key })]);

  expect(ses.sent).toHaveLength(1);
  expect(response.batchItemFailures).toEqual([]); // dead-lettered, so deleted from the source queue
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: resources.deadLetterQueueUrl,
      MessageAttributeNames: ['All'],
      WaitTimeSeconds: 1,
    }),
  );
  const dead = Messages.find((m) => m.MessageAttributes?.['dedupe-key']?.StringValue === key);
  expect(dead?.MessageAttributes?.['error-code']?.StringValue).toBe('KeyReusedWithDifferentContent');
  expect(dead?.MessageAttributes?.['error-class']?.StringValue).toBe('permanent');
});

test('a completion write that fails after the send is retried within the invocation, so a later copy is a duplicate', async () => {
  const ses = new CountingSes();
  const snsMessageId = randomUUID();
  const failures = { updates: 2 };
  const first = await invoke(newHandler(ses, flakyDynamoDb(failures)), [
    record(message('e@example.com'), { snsMessageId }),
  ]);
  expect(first.batchItemFailures).toEqual([]); // sent: never retried through the queue
  expect(failures.updates).toBe(0);

  const copy = await invoke(newHandler(ses), [record(message('e@example.com'), { snsMessageId })]);
  expect(copy.batchItemFailures).toEqual([]);
  expect(ses.sent).toHaveLength(1);
});

test('a completion write that keeps failing still settles the message without a second send', async () => {
  const ses = new CountingSes();
  const failures = { updates: 1_000 };
  // A short invocation: the retries stop before its deadline.
  const response = await invoke(newHandler(ses, flakyDynamoDb(failures)), [record(message('f@example.com'))], 2_500);
  expect(response.batchItemFailures).toEqual([]);
  expect(ses.sent).toHaveLength(1);
  expect(failures.updates).toBeLessThan(1_000 - 1); // it did retry
});

/** The dead letter of `key` on the DLQ, if any. */
async function deadLetterOf(key: string) {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: resources.deadLetterQueueUrl,
      MessageAttributeNames: ['All'],
      WaitTimeSeconds: 1,
    }),
  );
  return Messages.find((m) => m.MessageAttributes?.['dedupe-key']?.StringValue === key);
}

describe('attachments by s3Key: the object ETag is in the payload hash', () => {
  const withObject = (to: string, s3Key: string) => ({
    ...message(to),
    attachments: [{ filename: 'report.csv', contentType: 'text/csv', s3Key }],
  });

  test('the same key and the same object again is a duplicate; the object reached SES', async () => {
    const ses = new CountingSes();
    const bucket = new FakeBucket();
    const key = `report-${randomUUID()}`;
    bucket.put('reports/q1.csv', 'a,b\n1,2\n');
    await invoke(newHandler(ses, dynamodb, bucket), [record(withObject('g@example.com', 'reports/q1.csv'), { key })]);
    const again = await invoke(newHandler(ses, dynamodb, bucket), [
      record(withObject('g@example.com', 'reports/q1.csv'), { key }),
    ]);
    expect(again.batchItemFailures).toEqual([]);
    expect(ses.sent).toHaveLength(1);
    const [part] = ses.sent[0]?.input.Content?.Simple?.Attachments ?? [];
    expect(Buffer.from(part?.RawContent ?? []).toString()).toBe('a,b\n1,2\n');
  });

  test('the same key with the object changed under it is KeyReusedWithDifferentContent, not sent', async () => {
    const ses = new CountingSes();
    const bucket = new FakeBucket();
    const key = `report-${randomUUID()}`;
    bucket.put('reports/q2.csv', 'first');
    await invoke(newHandler(ses, dynamodb, bucket), [record(withObject('h@example.com', 'reports/q2.csv'), { key })]);
    bucket.put('reports/q2.csv', 'second');
    const response = await invoke(newHandler(ses, dynamodb, bucket), [
      record(withObject('h@example.com', 'reports/q2.csv'), { key }),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(ses.sent).toHaveLength(1);
    expect((await deadLetterOf(key))?.MessageAttributes?.['error-code']?.StringValue).toBe(
      'KeyReusedWithDifferentContent',
    );
  });

  test('a missing object is dead-lettered on attachments[0].s3Key, nothing sent', async () => {
    const ses = new CountingSes();
    const key = `report-${randomUUID()}`;
    await invoke(newHandler(ses, dynamodb, new FakeBucket()), [
      record(withObject('i@example.com', 'nowhere.csv'), { key }),
    ]);
    expect(ses.sent).toHaveLength(0);
    const dead = await deadLetterOf(key);
    expect(dead?.MessageAttributes?.['error-code']?.StringValue).toBe('AttachmentUnreadable');
    expect(JSON.stringify(dead?.MessageAttributes)).toContain('attachments[0].s3Key');
  });
});
