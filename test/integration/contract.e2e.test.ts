/**
 * Contract v1.1 and the topic check, end to end on the emulators: addresses as
 * people write them are mailed in the form SES takes, a Number key dedupes like
 * a String one, the From address carries senderName, and what is put straight
 * into the queue (a raw body, another topic's envelope) is dead-lettered with
 * its reason and never mailed.
 */
import { PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { readMailbox, type MailboxEmail } from '../../tools/dev/local/emulators';
import { drainQueue } from '../../tools/dev/local/queues';
import { snsEnvelope } from '../../tools/dev/local/records';
import { email, mailTo, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
beforeAll(async () => {
  p = await startTestPipeline({ settings: { senderName: 'Café Shop' } });
});
afterAll(() => p?.stop());

const domainOf = (p: TestPipeline) => p.address('x').split('@')[1] ?? '';

/** Emails of this pipeline, display names included (p.emails() matches bare addresses only). */
async function mailed(): Promise<MailboxEmail[]> {
  const domain = domainOf(p);
  return (await readMailbox(p.endpoints.ses)).emails.filter((e) =>
    [...e.destination.to, ...e.destination.cc].some((to) => to.includes(`@${domain}`)),
  );
}

test('display-name recipients are mailed, each in the form SES takes, from "senderName <senderAddress>"', async () => {
  const domain = domainOf(p);
  await p.publish({
    to: [`Ada Lovelace <ada@${domain}>`, `"Lovelace, Ada" <ada2@${domain}>`],
    cc: [`José Müller <jose@${domain}>`],
    subject: 'Display names',
    text: 'Hello',
  });
  await until('the email in the SES store', async () => (await mailed()).length === 1);

  const [sent] = await mailed();
  expect(sent?.destination.to).toEqual([`Ada Lovelace <ada@${domain}>`, `"Lovelace, Ada" <ada2@${domain}>`]);
  expect(sent?.destination.cc).toEqual([`=?UTF-8?B?Sm9zw6kgTcO8bGxlcg==?= <jose@${domain}>`]);
  expect(sent?.from).toBe('=?UTF-8?B?Q2Fmw6kgU2hvcA==?= <noreply@example.com>');
});

test('a Number-typed idempotency key published twice is one email', async () => {
  const to = p.address('number-key');
  const publish = () =>
    p.pipeline.sns.send(
      new PublishCommand({
        TopicArn: p.pipeline.resources.topicArn,
        Message: JSON.stringify(email(to, 'Order 4200001')),
        MessageAttributes: { 'idempotency-key': { DataType: 'Number', StringValue: '4200001' } },
      }),
    );
  await publish();
  await publish();
  await until('both copies settled', () =>
    p.decisions().some((d) => d.decision === 'duplicate' && d.dedupeKey === '4200001'),
  );

  const mine = await mailTo(p.endpoints.ses, to);
  expect(mine).toHaveLength(1);
  expect(p.decisions('dead-lettered').filter((d) => d.dedupeKey === '4200001')).toEqual([]);
});

test('a raw body and a foreign-topic envelope put straight into the queue are dead-lettered with their reasons, never mailed', async () => {
  const rawTo = p.address('planted-raw');
  const foreignTo = p.address('planted-foreign');
  const dlqBefore = p.decisions('dead-lettered').length;
  await p.pipeline.sqs.send(
    new SendMessageCommand({
      QueueUrl: p.pipeline.resources.queueUrl,
      MessageBody: JSON.stringify(email(rawTo)),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'planted-raw' } },
    }),
  );
  await p.pipeline.sqs.send(
    new SendMessageCommand({
      QueueUrl: p.pipeline.resources.queueUrl,
      MessageBody: JSON.stringify(
        snsEnvelope(email(foreignTo), { topicArn: 'arn:aws:sns:us-east-1:000000000000:other', key: 'planted-foreign' }),
      ),
    }),
  );
  await until('both dead-lettered', () => p.decisions('dead-lettered').length === dlqBefore + 2);

  const letters = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 2);
  const codes = letters.map((m) => ({
    code: m.MessageAttributes?.['error-code']?.StringValue,
    reason: m.MessageAttributes?.['error-reason']?.StringValue ?? '',
    receiveCount: m.MessageAttributes?.['receive-count']?.StringValue,
  }));
  expect(codes).toEqual(
    expect.arrayContaining([
      {
        code: 'NotAnEnvelope',
        reason: expect.stringMatching(/^body: must be an SNS notification from the pipeline's topic/),
        receiveCount: '1',
      },
      {
        code: 'ForeignTopic',
        reason: expect.stringContaining(`must be the pipeline's topic ${p.pipeline.resources.topicArn}`),
        receiveCount: '1',
      },
    ]),
  );
  // The DLQ keeps what was put in, as it was: a redrive would meet the same check.
  expect(letters.map((m) => m.Body)).toEqual(
    expect.arrayContaining([
      JSON.stringify(email(rawTo)),
      expect.stringContaining('"TopicArn":"arn:aws:sns:us-east-1:000000000000:other"'),
    ]),
  );
  const mailbox = (await readMailbox(p.endpoints.ses)).emails;
  expect(mailbox.filter((e) => e.destination.to.includes(rawTo) || e.destination.to.includes(foreignTo))).toEqual([]);
});
