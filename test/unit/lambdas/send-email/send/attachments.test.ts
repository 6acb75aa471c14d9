/**
 * The send stage's attachments and headers: the SES request carries them on simple and template
 * content; objects are fingerprinted (ETag into the email the claim hashes) before the claim and
 * read at that ETag at the send; each failure has its class and names its field.
 */
import {
  ATTACHMENT_LIMITS,
  InvalidMessageError,
  validateEmail,
  type EmailMessage,
} from '../../../../../lambdas/kernel/contract';
import { RetryableError } from '../../../../../lambdas/kernel/errors';
import { createAttachmentObjects, type ObjectStore } from '../../../../../lambdas/send-email/send/attachments';
import { buildSendEmailInput } from '../../../../../lambdas/send-email/send/email';

const sender = { senderAddress: 'noreply@example.com' };

function s3Error(status: number, name: string): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
}

/** A bucket of one object, `report.csv` ("a,b"), and what was asked of it. */
function bucket(overrides: Partial<ObjectStore> = {}): ObjectStore & { gets: [string, string][] } {
  const gets: [string, string][] = [];
  return {
    gets,
    head: async (key) => {
      if (key !== 'report.csv') throw s3Error(404, 'NotFound');
      return { etag: '"e1"', size: 3 };
    },
    get: async (key, etag) => {
      gets.push([key, etag]);
      return Buffer.from('a,b');
    },
    ...overrides,
  };
}

const byKey = (s3Key = 'report.csv'): EmailMessage =>
  validateEmail({
    to: 'ada@example.com',
    subject: 'Q1',
    text: 'Attached.',
    attachments: [{ filename: 'report.csv', contentType: 'text/csv', s3Key }],
  });

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('the SES request', () => {
  const email = validateEmail({
    to: 'ada@example.com',
    subject: 'Hi',
    html: '<img src="cid:logo">',
    headers: { 'List-Unsubscribe': '<https://example.com/u/1>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    attachments: [
      { filename: 'logo.png', contentType: 'image/png', content: 'iVBO', disposition: 'inline', contentId: 'logo' },
    ],
  });

  test('headers and attachments ride on simple content', async () => {
    const parts = await createAttachmentObjects(undefined).parts(email);
    const simple = buildSendEmailInput(email, sender, 'k', undefined, parts).Content?.Simple;
    expect(simple?.Headers).toEqual([
      { Name: 'List-Unsubscribe', Value: '<https://example.com/u/1>' },
      { Name: 'List-Unsubscribe-Post', Value: 'List-Unsubscribe=One-Click' },
    ]);
    expect(simple?.Attachments).toEqual([
      {
        FileName: 'logo.png',
        ContentType: 'image/png',
        ContentDisposition: 'INLINE',
        ContentTransferEncoding: 'BASE64',
        ContentId: 'logo',
        RawContent: Buffer.from('iVBO', 'base64'),
      },
    ]);
  });

  test('headers and attachments ride on template content too', async () => {
    const templated = validateEmail({
      to: 'ada@example.com',
      template: { name: 'invoice' },
      headers: { 'X-Campaign': 'spring' },
      attachments: [{ filename: 'invoice.pdf', contentType: 'application/pdf', content: 'JVBERi0=' }],
    });
    const parts = await createAttachmentObjects(undefined).parts(templated);
    const template = buildSendEmailInput(templated, sender, 'k', undefined, parts).Content?.Template;
    expect(template?.Headers).toEqual([{ Name: 'X-Campaign', Value: 'spring' }]);
    expect(template?.Attachments?.[0]).toMatchObject({ FileName: 'invoice.pdf', ContentDisposition: 'ATTACHMENT' });
  });

  test('an email without them sends no Headers or Attachments (the request of v1.1)', () => {
    const plain = validateEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hi' });
    const simple = buildSendEmailInput(plain, sender, 'k').Content?.Simple;
    expect(simple).not.toHaveProperty('Headers');
    expect(simple).not.toHaveProperty('Attachments');
  });
});

describe('objects: fingerprint before the claim, read at the send', () => {
  test('an email without objects is returned as it is, the bucket never asked', async () => {
    const store = bucket({ head: () => Promise.reject(new Error('asked')) });
    const email = validateEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hi' });
    expect(await createAttachmentObjects(store).fingerprint(email)).toBe(email);
  });

  test("the object's ETag is written into its attachment (the payload hash covers it)", async () => {
    const fingerprinted = await createAttachmentObjects(bucket()).fingerprint(byKey());
    expect(fingerprinted.attachments?.[0]).toEqual({
      filename: 'report.csv',
      contentType: 'text/csv',
      disposition: 'attachment',
      s3Key: 'report.csv',
      etag: '"e1"',
    });
  });

  test('the object is read at its fingerprinted ETag', async () => {
    const store = bucket();
    const objects = createAttachmentObjects(store);
    const parts = await objects.parts(await objects.fingerprint(byKey()));
    expect(store.gets).toEqual([['report.csv', '"e1"']]);
    expect(Buffer.from(parts?.[0]?.RawContent ?? []).toString()).toBe('a,b');
  });

  test('a missing object is permanent, on attachments[0].s3Key', async () => {
    const error = await failure(createAttachmentObjects(bucket()).fingerprint(byKey('gone.csv')));
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect((error as InvalidMessageError).code).toBe('AttachmentUnreadable');
    expect((error as InvalidMessageError).issues[0]?.field).toBe('attachments[0].s3Key');
  });

  test('an object the function may not read (403: S3 says so for a missing key without ListBucket) is permanent', async () => {
    const store = bucket({ head: () => Promise.reject(s3Error(403, 'Forbidden')) });
    expect(await failure(createAttachmentObjects(store).fingerprint(byKey()))).toBeInstanceOf(InvalidMessageError);
  });

  test('S3 not answering is retryable', async () => {
    const store = bucket({ head: () => Promise.reject(s3Error(503, 'SlowDown')) });
    const error = await failure(createAttachmentObjects(store).fingerprint(byKey()));
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe('AttachmentStoreUnavailable');
  });

  test(`objects over ${ATTACHMENT_LIMITS.maxTotalBytes} bytes together are permanent, on attachments`, async () => {
    const store = bucket({ head: async () => ({ etag: '"big"', size: ATTACHMENT_LIMITS.maxTotalBytes + 1 }) });
    const error = await failure(createAttachmentObjects(store).fingerprint(byKey()));
    expect((error as InvalidMessageError).issues).toEqual([
      { field: 'attachments', reason: expect.stringContaining('over the limit') as unknown as string },
    ]);
  });

  test('an object replaced between the fingerprint and the send fails retryable, before SES', async () => {
    const store = bucket({ get: () => Promise.reject(s3Error(412, 'PreconditionFailed')) });
    const objects = createAttachmentObjects(store);
    const error = await failure(objects.parts(await objects.fingerprint(byKey())));
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as RetryableError).code).toBe('AttachmentChanged');
  });

  test('without a bucket, an s3Key is refused (permanent) on its field', async () => {
    const error = await failure(createAttachmentObjects(undefined).fingerprint(byKey()));
    expect((error as InvalidMessageError).issues[0]?.field).toBe('attachments[0].s3Key');
  });
});
