/**
 * The send stage's reservation: an email's files are held in the container's byte budget at the
 * size the fingerprint saw, before they are read.
 */
import { validateEmail, type EmailMessage } from '../../../../../lambdas/kernel/contract';
import { createAttachmentObjects, type ObjectStore } from '../../../../../lambdas/send-email/send/attachments';
import { createByteBudget } from '../../../../../lambdas/send-email/send/byte-budget';

const MIB = 1024 * 1024;

function bucket(heads: { count: number }): ObjectStore {
  return {
    head: async () => {
      heads.count += 1;
      return { etag: '"e1"', size: 8 * MIB };
    },
    get: async () => Buffer.alloc(8),
  };
}

const email = (i: number): EmailMessage =>
  validateEmail({
    to: 'ada@example.com',
    subject: 'Report',
    text: 'attached',
    attachments: [{ filename: 'report.pdf', contentType: 'application/pdf', s3Key: `report-${i}.pdf` }],
  });

describe('attachment reservation', () => {
  test("an email's objects are held at their fingerprinted size, without asking S3 again", async () => {
    const heads = { count: 0 };
    const budget = createByteBudget(100 * MIB);
    const objects = createAttachmentObjects(bucket(heads), budget);
    const release = await objects.reserve(await objects.fingerprint(email(1)));
    expect(budget.held()).toBe(8 * MIB);
    expect(heads.count).toBe(1);
    release();
    expect(budget.held()).toBe(0);
  });

  test('a second email waits while the first holds the budget', async () => {
    const budget = createByteBudget(10 * MIB);
    const objects = createAttachmentObjects(bucket({ count: 0 }), budget);
    const first = await objects.reserve(await objects.fingerprint(email(1)));
    let granted = false;
    const second = objects.reserve(await objects.fingerprint(email(2))).then((release) => {
      granted = true;
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(granted).toBe(false);
    first();
    (await second)();
    expect(granted).toBe(true);
  });

  test('an email without files holds nothing', async () => {
    const budget = createByteBudget(MIB);
    const objects = createAttachmentObjects(undefined, budget);
    await objects.reserve(validateEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hi' }));
    expect(budget.held()).toBe(0);
  });
});
