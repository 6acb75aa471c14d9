/**
 * The bad-input catalogue, end to end: each bad message lands in the DLQ at
 * once (receive 1, not after maxReceiveCount) with its own reason, while the
 * good messages published beside it are sent. Nothing is lost: every message
 * ends as exactly one email or exactly one DLQ entry.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PublishCommand } from '@aws-sdk/client-sns';
import { drainQueue } from '../../tools/dev/local/queues';
import { snsEnvelope } from '../../tools/dev/local/records';
import { email, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
afterAll(() => p?.stop());

interface Case {
  readonly name: string;
  /** What the publisher sends: an SNS message (string or object) or a raw SQS body. */
  readonly message?: string | object;
  readonly rawBody?: string;
  /** An SQS idempotency-key attribute on the raw body. */
  readonly rawKey?: string;
  /** The DLQ error-reason must match this. */
  readonly reason: RegExp;
  readonly code: string;
}

const big = 'x'.repeat(210 * 1024);

function cases(p: TestPipeline): Case[] {
  const to = p.address('bad');
  return [
    {
      name: 'body not JSON',
      message: 'hello, not json',
      code: 'InvalidJson',
      reason: /^envelope\.Message: is not valid JSON/,
    },
    {
      name: 'JSON not an object',
      message: '[1,2,3]',
      code: 'InvalidMessage',
      reason: /^message: must be a JSON object, got an array/,
    },
    { name: 'missing to', message: { subject: 'S', text: 'T' }, code: 'InvalidMessage', reason: /^to: is required/ },
    {
      name: 'empty subject',
      message: { to, subject: '', text: 'T' },
      code: 'InvalidMessage',
      reason: /^subject: must not be empty/,
    },
    {
      name: 'wrong type',
      message: { to, subject: 42, text: 'T' },
      code: 'InvalidMessage',
      reason: /^subject: must be a string, got a number/,
    },
    {
      name: 'invalid address',
      message: { to: 'not-an-address', subject: 'S', text: 'T' },
      code: 'InvalidMessage',
      reason: /^to: must be an email address/,
    },
    {
      name: 'too many addresses',
      message: { to: Array.from({ length: 51 }, (_, i) => p.address(`r${i}`)), subject: 'S', text: 'T' },
      code: 'InvalidMessage',
      reason: /at most 50 recipients, got 51/,
    },
    {
      name: 'CR/LF in subject',
      message: { to, subject: 'Hi\r\nBcc: all@example.com', text: 'T' },
      code: 'InvalidMessage',
      reason: /^subject: must not contain CR or LF/,
    },
    {
      name: 'CR/LF in address',
      message: { to: `${to}\r\nBcc: all@example.com`, subject: 'S', text: 'T' },
      code: 'InvalidMessage',
      reason: /^to: must not contain CR or LF/,
    },
    {
      name: 'content over the limit',
      message: { to, subject: 'S', text: big },
      code: 'InvalidMessage',
      reason: /over the limit of 204800/,
    },
    {
      name: 'both content kinds',
      message: { to, subject: 'S', text: 'T', template: { name: 'welcome' } },
      code: 'InvalidMessage',
      reason: /cannot be combined with text or html/,
    },
    {
      name: 'neither content kind',
      message: { to, subject: 'S' },
      code: 'InvalidMessage',
      reason: /content is required/,
    },
    {
      name: 'odd Unicode',
      message: { to, subject: 'Invoice \u202Egnp.exe', text: 'T' },
      code: 'InvalidMessage',
      reason: /invisible or text-direction characters/,
    },
    {
      name: 'a header asking for read receipts to an address of its choosing',
      message: { to, subject: 'S', text: 'T', headers: { 'Disposition-Notification-To': 'eve@example.com' } },
      code: 'InvalidMessage',
      reason: /^headers\.Disposition-Notification-To: is refused: .*read receipt/,
    },
    {
      name: 'a Resent- header',
      message: { to, subject: 'S', text: 'T', headers: { 'Resent-From': 'ceo@example.com' } },
      code: 'InvalidMessage',
      reason: /^headers\.Resent-From: is refused: Resent- fields/,
    },
    {
      name: 'a file name ending in an ideographic space (U+3000)',
      message: {
        to,
        subject: 'S',
        text: 'T',
        attachments: [{ filename: 'invoice.exe\u3000', contentType: 'application/pdf', content: 'JVBERi0=' }],
      },
      code: 'InvalidMessage',
      reason: /^attachments\[0\]\.filename: must not end with a dot or a space/,
    },
    {
      name: 'an s3Key that climbs out of its place (../other/x.txt)',
      message: {
        to,
        subject: 'S',
        text: 'T',
        attachments: [{ filename: 'x.txt', contentType: 'text/plain', s3Key: '../other/x.txt' }],
      },
      code: 'InvalidMessage',
      reason: /^attachments\[0\]\.s3Key: must not have a \. or \.\. segment/,
    },
    {
      name: 'unknown template',
      message: { to, template: { name: 'no-such-template', data: {} } },
      code: 'NotFoundException',
      reason: /^SES refused the email/,
    },
    {
      name: 'raw body put straight on the queue, even with an idempotency key',
      rawBody: JSON.stringify(email(to)),
      rawKey: 'planted-1',
      code: 'NotAnEnvelope',
      reason: /^body: must be an SNS notification from the pipeline's topic/,
    },
    {
      name: 'envelope of another topic put straight on the queue',
      rawBody: JSON.stringify(
        snsEnvelope(email(to), { topicArn: 'arn:aws:sns:us-east-1:000000000000:someone-elses', key: 'planted-2' }),
      ),
      code: 'ForeignTopic',
      reason: /^envelope\.TopicArn: must be the pipeline's topic arn:aws:sns:/,
    },
    {
      name: 'envelope missing fields',
      rawBody: JSON.stringify({
        Type: 'Notification',
        TopicArn: p.pipeline.resources.topicArn,
        Message: '{}',
      }),
      code: 'InvalidEnvelope',
      reason: /^envelope\.MessageId: is missing/,
    },
  ];
}

test('each bad message reaches the DLQ at once with its own reason while its neighbours are sent', async () => {
  p = await startTestPipeline({ settings: { batchSize: 10 } });
  const bad = cases(p);
  const good = ['g1', 'g2', 'g3', 'g4'].map((label) => p.address(label));

  // Interleave good and bad so they share batches.
  const sends: Promise<unknown>[] = [];
  bad.forEach((c, i) => {
    if (c.rawBody !== undefined) {
      sends.push(
        p.pipeline.sqs.send(
          new SendMessageCommand({
            QueueUrl: p.pipeline.resources.queueUrl,
            MessageBody: c.rawBody,
            ...(c.rawKey !== undefined
              ? { MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: c.rawKey } } }
              : {}),
          }),
        ),
      );
    } else {
      const message = typeof c.message === 'string' ? c.message : JSON.stringify(c.message);
      sends.push(
        p.pipeline.sns.send(new PublishCommand({ TopicArn: p.pipeline.resources.topicArn, Message: message })),
      );
    }
    const neighbour = good[i % good.length];
    if (i < good.length && neighbour) sends.push(p.publish(email(neighbour, `Neighbour ${i}`)));
  });
  await Promise.all(sends);

  const total = bad.length + good.length;
  await until(
    'every message settled',
    async () => {
      const settled = p.decisions().filter((d) => d.decision !== 'retry').length;
      return settled === total && (await p.pipeline.isDrained());
    },
    30_000,
  );

  // Conservation: every good message is one email, every bad one is one DLQ entry.
  expect((await p.emails()).map((e) => e.destination.to[0]).sort()).toEqual([...good].sort());
  const letters = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, bad.length);
  const seen = letters.map((m) => ({
    code: m.MessageAttributes?.['error-code']?.StringValue ?? '',
    reason: m.MessageAttributes?.['error-reason']?.StringValue ?? '',
    receiveCount: m.MessageAttributes?.['receive-count']?.StringValue,
  }));
  for (const c of bad) {
    const match = seen.find((s) => s.code === c.code && c.reason.test(s.reason));
    expect({ case: c.name, found: match !== undefined, seen: match ? undefined : seen }).toEqual({
      case: c.name,
      found: true,
      seen: undefined,
    });
  }
  // At once: on the first receive, never after retries.
  expect(seen.every((s) => s.receiveCount === '1')).toBe(true);
  expect(p.decisions('retry')).toEqual([]);
});
