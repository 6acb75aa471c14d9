/**
 * Contract v1.2 end to end on the emulators: an inline attachment and custom headers (one-click
 * unsubscribe) reach the mailbox, and its page shows them; a 400 KB file goes by s3Key through the
 * attachments bucket on fauxqs's S3 (uploaded by the publisher client) and is mailed whole; a file
 * named with a path is dead-lettered with a reason naming attachments[0].filename, never mailed.
 */
import { EmailPublisher } from '../../lib/publisher';
import { drainQueue } from '../../tools/dev/local/queues';
import { mailTo, startTestPipeline, until, type TestPipeline } from './support';

let p: TestPipeline;
beforeAll(async () => {
  p = await startTestPipeline();
});
afterAll(() => p?.stop());

const unsubscribe = {
  'List-Unsubscribe': '<https://example.com/unsubscribe/42>',
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
};

test('an inline attachment and custom headers reach the mailbox, and its page shows them', async () => {
  const to = p.address('inline');
  await p.publish({
    to,
    subject: 'Your invoice',
    html: '<p>Invoice attached <img src="cid:logo"></p>',
    headers: unsubscribe,
    attachments: [
      { filename: 'invoice.txt', contentType: 'text/plain', content: Buffer.from('total: 42').toString('base64') },
      { filename: 'logo.png', contentType: 'image/png', content: 'iVBORw0=', disposition: 'inline', contentId: 'logo' },
    ],
  });
  await until('the email in the mailbox', async () => (await mailTo(p.endpoints.ses, to)).length === 1);

  const [sent] = await mailTo(p.endpoints.ses, to);
  expect(sent?.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType }))).toEqual([
    { filename: 'invoice.txt', contentType: 'text/plain' },
    { filename: 'logo.png', contentType: 'image/png' },
  ]);
  expect(Buffer.from(sent?.attachments[0]?.content ?? '', 'base64').toString()).toBe('total: 42');
  expect(sent?.headers).toEqual(
    expect.arrayContaining([
      { name: 'List-Unsubscribe', value: '<https://example.com/unsubscribe/42>' },
      { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    ]),
  );
  const page = await (await fetch(`${p.endpoints.ses}/`)).text();
  expect(page).toContain('<b>Headers:</b>');
});

test('a 400 KB file goes by s3Key through the attachments bucket and is mailed whole', async () => {
  const bucket = p.pipeline.resources.attachmentsBucketName;
  expect(bucket).toBeDefined();
  const to = p.address('by-key');
  const bytes = Buffer.alloc(400 * 1024);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = (i * 31) % 251;
  const publisher = new EmailPublisher({
    topicArn: p.pipeline.resources.topicArn,
    sns: p.pipeline.sns,
    attachments: { bucket: bucket ?? '', s3: p.pipeline.s3 },
  });
  await publisher.publish(
    {
      to,
      subject: 'The report',
      text: 'Attached.',
      attachments: [{ filename: 'report.bin', contentType: 'application/octet-stream', content: bytes }],
    },
    { idempotencyKey: `report-${to}` },
  );
  await until('the email in the mailbox', async () => (await mailTo(p.endpoints.ses, to)).length === 1, 30_000);

  const [sent] = await mailTo(p.endpoints.ses, to);
  expect(sent?.attachments).toHaveLength(1);
  expect(sent?.attachments[0]?.size).toBe(400 * 1024);
  expect(Buffer.from(sent?.attachments[0]?.content ?? '', 'base64').equals(bytes)).toBe(true);
});

test('a file named ../../etc/passwd is dead-lettered with a reason naming attachments[0].filename, never mailed', async () => {
  const to = p.address('path');
  const before = p.decisions('dead-lettered').length;
  await p.publish(
    {
      to,
      subject: 'Hi',
      text: 'Hi',
      attachments: [{ filename: '../../etc/passwd', contentType: 'text/plain', content: 'cm9vdA==' }],
    },
    { key: `path-${to}` },
  );
  await until('dead-lettered', () => p.decisions('dead-lettered').length === before + 1);

  const letters = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1);
  const letter = letters.find((m) => m.MessageAttributes?.['dedupe-key']?.StringValue === `path-${to}`);
  expect(letter?.MessageAttributes?.['error-code']?.StringValue).toBe('InvalidMessage');
  expect(letter?.MessageAttributes?.['error-reason']?.StringValue).toMatch(/^attachments\[0\]\.filename: /);
  expect(await mailTo(p.endpoints.ses, to)).toEqual([]);
});
