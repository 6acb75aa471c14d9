/**
 * Large attachments end to end on the emulators, with the local consumer held to the send
 * function's memory (it dies above it, as Lambda ends a container): ten emails each with an 8 MiB
 * object by s3Key, published at once, are all mailed once and none dead-lettered, the consumer
 * never above its memory; an email with a 24 MiB file is uploaded by the publisher client and mailed.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { EmailPublisher } from '../../lib/publisher';
import {
  ANY_FREE_PORTS,
  readMailbox,
  startEmulators,
  type Emulators,
  type MailboxEmail,
} from '../../tools/dev/local/emulators';
import { addressedTo, startTestPipeline, until, type TestPipeline, nowSeconds } from './support';

const MIB = 1024 * 1024;
// Large requests take more than the fast tests' 2 s on a shared machine.
const SETTINGS = { functionTimeoutSeconds: 60 } as const;

let p: TestPipeline;
/**
 * Emulators of this file's own: the mailbox keeps every email whole, and a store holding these
 * hundred megabytes would slow every other test's mailbox read on the shared emulators.
 */
let own: Emulators | undefined;
beforeAll(async () => {
  own = await startEmulators({ ports: ANY_FREE_PORTS, sesAccountRate: 1000 });
  // With the ledger: a send whose answer came late under load is confirmed by its SES event, not resent.
  p = await startTestPipeline({ settings: SETTINGS, ledger: true, endpoints: own.endpoints });
}, 180_000);
afterAll(async () => {
  await p?.stop();
  await own?.stop();
});

/** The mailbox holds these emails' files base64-encoded: read it once sent, with time to serve it. */
async function mailbox(since: number): Promise<readonly MailboxEmail[]> {
  return (await readMailbox(p.endpoints.ses, { since, timeoutMs: 120_000 })).emails;
}
const sentKeys = (prefix: string) =>
  new Set(p.decisions('sent').flatMap((d) => (d.dedupeKey?.startsWith(prefix) ? [d.dedupeKey] : [])));

function noConsumerAboveMemory(): void {
  const limitMb = p.pipeline.options.settings.memorySizeMb;
  expect(p.pipeline.outOfMemory).toEqual([]);
  for (const consumer of p.consumers) {
    const peak = p.pipeline.peakRssMb.get(consumer.name);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(limitMb);
  }
}

test('ten emails with an 8 MiB object each, published at once, are mailed once each, none dead-lettered', async () => {
  const since = nowSeconds();
  const bucket = p.pipeline.resources.attachmentsBucketName ?? '';
  const bytes = Buffer.alloc(8 * MIB, 0x5a);
  const keys = Array.from({ length: 10 }, (_, i) => `${p.name}-big-${i}.bin`);
  for (const key of keys) await p.pipeline.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));

  const to = keys.map((_, i) => p.address(`big-${i}`));
  await Promise.all(
    keys.map((key, i) =>
      p.publish(
        {
          to: to[i],
          subject: `Bundle ${i}`,
          text: 'Attached.',
          attachments: [{ filename: 'bundle.pdf', contentType: 'application/pdf', s3Key: key }],
        },
        { key: `big-${p.name}-${i}` },
      ),
    ),
  );
  await until('all ten sent', () => sentKeys(`big-${p.name}-`).size === 10, 180_000);

  const emails = await mailbox(since);
  const retries = p.decisions('retry').map((d) => `${d.dedupeKey}: ${d.errorCode} ${d.reason ?? ''}`);
  const mailed = to.map((address) => addressedTo(emails, address));
  expect({ mailed: mailed.map((m) => m.length), retries }).toEqual({ mailed: to.map(() => 1), retries });
  expect(mailed.map((m) => m[0]?.attachments[0]?.size)).toEqual(to.map(() => 8 * MIB));
  expect(p.decisions('dead-lettered')).toEqual([]);
  expect((await p.pipeline.queueDepth('dlq')).visible).toBe(0);
  noConsumerAboveMemory();
}, 240_000);

test('an email with a 24 MiB file is uploaded by the publisher client and mailed whole', async () => {
  const since = nowSeconds();
  const to = p.address('largest');
  const bytes = Buffer.alloc(24 * MIB);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
  const publisher = new EmailPublisher({
    topicArn: p.pipeline.resources.topicArn,
    sns: p.pipeline.sns,
    attachments: { bucket: p.pipeline.resources.attachmentsBucketName ?? '', s3: p.pipeline.s3 },
  });
  await publisher.publish(
    {
      to,
      subject: 'Invoices',
      text: 'Attached.',
      attachments: [{ filename: 'invoices.pdf', contentType: 'application/pdf', content: bytes }],
    },
    { idempotencyKey: `largest-${to}` },
  );
  await until('the email sent', () => sentKeys(`largest-${to}`).size === 1, 120_000);

  const [sent] = addressedTo(await mailbox(since), to);
  expect(sent?.attachments[0]?.size).toBe(24 * MIB);
  expect(Buffer.from(sent?.attachments[0]?.content ?? '', 'base64').equals(bytes)).toBe(true);
  noConsumerAboveMemory();
}, 180_000);
