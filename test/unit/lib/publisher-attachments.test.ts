/**
 * The publisher client's files (contract v1.2): bytes inline while the SNS message holds them,
 * the largest by s3Key in the attachments bucket otherwise (uploaded before the publish, never
 * over an existing object, under a key a retry with the same idempotency key repeats).
 */
import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { EmailPublisher, InvalidMessageError } from '../../../lib/publisher';
import { placeAttachments } from '../../../lib/publisher-attachments';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:emails';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

interface Call {
  readonly command: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request's input, read as the test needs it
  readonly input: Record<string, any>;
}

/** A client whose requests are answered by `answer` at the front of its middleware stack, each recorded. */
function standIn<C extends SNSClient | S3Client>(client: C, calls: Call[], answer: (call: Call) => object): C {
  (client as unknown as SNSClient).middlewareStack.add(
    (_next, context) => async (args) => {
      const call = { command: context.commandName ?? '', input: args.input as Call['input'] };
      calls.push(call);
      return { output: { $metadata: {}, ...answer(call) }, response: {} };
    },
    { step: 'initialize', name: 'stand-in' },
  );
  return client;
}

function publisher(options: { bucket?: boolean; putAnswer?: (call: Call) => object } = {}) {
  const calls: Call[] = [];
  const sns = standIn(new SNSClient({ region: 'eu-west-1', credentials }), calls, ({ command, input }) =>
    command === 'PublishCommand'
      ? { MessageId: 'm-1' }
      : {
          Successful: input.PublishBatchRequestEntries.map((e: { Id: string }) => ({
            Id: e.Id,
            MessageId: `m-${e.Id}`,
          })),
        },
  );
  const s3 = standIn(
    new S3Client({ region: 'eu-west-1', credentials }),
    calls,
    options.putAnswer ?? (() => ({ ETag: '"e"' })),
  );
  const client = new EmailPublisher({
    topicArn: TOPIC_ARN,
    sns,
    ...(options.bucket ? { attachments: { bucket: 'attachments-bucket', s3 } } : {}),
  });
  return { client, calls };
}

const base = { to: 'ada@example.com', subject: 'Your report', text: 'Attached.' };
const file = (bytes: number, filename = 'report.pdf') => ({
  filename,
  contentType: 'application/pdf',
  content: Buffer.alloc(bytes, 7),
});

test('a small file travels inline, as base64', async () => {
  const { client, calls } = publisher();
  await client.publish({ ...base, attachments: [file(3)] });
  expect(JSON.parse(calls[0]?.input.Message as string).attachments).toEqual([
    { filename: 'report.pdf', contentType: 'application/pdf', content: 'BwcH' },
  ]);
});

test('a file the SNS message cannot hold is uploaded first, and the message names it by s3Key', async () => {
  const { client, calls } = publisher({ bucket: true });
  const big = file(400 * 1024);
  await client.publish({ ...base, attachments: [big, file(3, 'small.pdf')] }, { idempotencyKey: 'report-7' });
  expect(calls.map((c) => c.command)).toEqual(['PutObjectCommand', 'PublishCommand']);
  const scope = createHash('sha256').update('report-7').digest('hex');
  const digest = createHash('sha256').update(big.content).digest('hex');
  expect(calls[0]?.input).toMatchObject({
    Bucket: 'attachments-bucket',
    Key: `attachments/${scope}/${digest}`,
    ContentType: 'application/pdf',
    IfNoneMatch: '*',
  });
  expect(JSON.parse(calls[1]?.input.Message as string).attachments).toEqual([
    { filename: 'report.pdf', contentType: 'application/pdf', s3Key: `attachments/${scope}/${digest}` },
    { filename: 'small.pdf', contentType: 'application/pdf', content: 'BwcH' },
  ]);
});

test('a publish retried with the same key names the same object, and an object already there is kept (412)', async () => {
  const { client, calls } = publisher({
    bucket: true,
    putAnswer: () => {
      throw Object.assign(new Error('PreconditionFailed'), { $metadata: { httpStatusCode: 412 } });
    },
  });
  const message = { ...base, attachments: [file(300 * 1024)] };
  await client.publish(message, { idempotencyKey: 'report-8' });
  const first = JSON.parse(calls[1]?.input.Message as string).attachments[0].s3Key;
  expect(placeAttachments(message, 'report-8', { bucket: 'b' }).uploads[0]?.key).toBe(first);
});

test("a team's files go under its prefix, the only one its messages may name; the pipeline's own stay where they were", () => {
  const message = { ...base, attachments: [file(300 * 1024)] };
  const own = placeAttachments(message, 'report-9', { bucket: 'b' }).uploads[0]?.key;
  const team = placeAttachments(message, 'report-9', { bucket: 'b' }, 'billing').uploads[0]?.key;
  expect(own).toMatch(/^attachments\//);
  expect(team).toBe(`billing/${own}`);
});

test('without a bucket, a file too large to travel inline is refused on its field, nothing published', async () => {
  const { client, calls } = publisher();
  const error = await client.publish({ ...base, attachments: [file(300 * 1024)] }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidMessageError);
  expect((error as InvalidMessageError).issues).toEqual([
    { field: 'attachments[0].content', reason: expect.stringContaining('attachmentsBucket') },
  ]);
  expect(calls).toEqual([]);
});

test('a message that breaks the contract uploads nothing', async () => {
  const { client, calls } = publisher({ bucket: true });
  const error = await client
    .publish({ ...base, to: 'not-an-address', attachments: [file(300 * 1024)] })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidMessageError);
  expect(calls).toEqual([]);
});

test('a batch uploads each entry before publishing it; an entry whose upload fails is reported, not sent', async () => {
  let puts = 0;
  const { client, calls } = publisher({
    bucket: true,
    putAnswer: () => {
      puts += 1;
      if (puts === 2)
        throw Object.assign(new Error('SlowDown'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
      return { ETag: '"e"' };
    },
  });
  const result = await client.publishBatch([
    { message: { ...base, attachments: [file(300 * 1024)] } },
    { message: { ...base, attachments: [file(301 * 1024)] } },
  ]);
  expect(result.results.map((r) => r.ok)).toEqual([true, false]);
  expect(calls.map((c) => c.command)).toEqual(['PutObjectCommand', 'PutObjectCommand', 'PublishBatchCommand']);
});

test("an upload the bucket's endpoint refuses as too large (413) names the file, its size and the limit's owner", async () => {
  const { client, calls } = publisher({
    bucket: true,
    putAnswer: () => {
      // The SDK's report of a 413 HTML answer from an endpoint with a body limit.
      throw Object.assign(new Error('XML parse error: unexpected content'), { $metadata: { httpStatusCode: 413 } });
    },
  });
  const error = await client.publish({ ...base, attachments: [file(300 * 1024, 'invoices.pdf')] }).catch((e) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe('AttachmentTooLargeForEndpoint');
  expect((error as Error).message).toMatch(
    /upload of attachment "invoices.pdf" \(307200 bytes\) to s3:\/\/attachments-bucket\/attachments\/.* refused: 413 Request body is too large/,
  );
  expect(calls.filter((c) => c.command === 'PublishCommand')).toEqual([]);
});
