/**
 * Peak memory of one container sending a batch of the largest emails the contract allows: each
 * email has one object of 25 MiB by `s3Key`, the batch's records run at once (as the handler runs
 * them), through the send stage's real part builder (send/attachments.ts), the real request
 * builder (send/email.ts) and the SES v2 client's real serializer. S3 is a fake that hands out a
 * fresh buffer per GetObject (as the SDK's body reader does); SES is a request handler that reads
 * the serialized body and answers 200.
 *
 * Each count runs in a fresh child process (so one run's garbage cannot count in the next) and
 * reports the kernel's peak RSS of that process (VmHWM in /proc/self/status, Linux only).
 *
 *   node --import tsx tools/dev/bench/attachment-memory.ts [counts...]   (default: 1 10)
 *   AWS_LAMBDA_FUNCTION_MEMORY_SIZE=N: the function memory the byte budget (send/byte-budget.ts)
 *   is chosen for, as in the send function (default 512).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { validateEmail } from '../../../lambdas/kernel/contract';
import {
  budgetFromEnvironment,
  buildSendEmailInput,
  createAttachmentObjects,
  type ObjectStore,
} from '../../../lambdas/send-email/testing';

const MIB = 1024 * 1024;
const OBJECT_BYTES = 25 * MIB;

function peakRssMib(): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

/** A bucket where every key is an object of OBJECT_BYTES; each read allocates its own copy. */
const store: ObjectStore = {
  head: async () => ({ etag: '"e"', size: OBJECT_BYTES }),
  get: async () => Buffer.alloc(OBJECT_BYTES, 0x61),
};

/** SES that reads the whole serialized request and accepts it. */
function fakeSes(): SESv2Client {
  return new SESv2Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    requestHandler: {
      handle: async (request: { body?: unknown }) => {
        let bytes = 0;
        const body = request.body;
        if (typeof body === 'string') bytes = Buffer.byteLength(body);
        else if (body instanceof Uint8Array) bytes = body.byteLength;
        else if (body && typeof (body as Readable)[Symbol.asyncIterator] === 'function') {
          for await (const chunk of body as Readable) bytes += (chunk as Buffer).length;
        }
        if (bytes === 0) throw new Error('no request body');
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/json' },
            body: Readable.from([Buffer.from('{"MessageId":"m"}')]),
          },
        };
      },
    } as never,
  });
}

async function child(count: number): Promise<void> {
  const ses = fakeSes();
  const objects = createAttachmentObjects(store, budgetFromEnvironment(process.env));
  const sender = { senderAddress: 'noreply@example.com' };
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = await objects.fingerprint(
        validateEmail({
          to: 'ada@example.com',
          subject: `Invoices ${i}`,
          text: 'attached',
          attachments: [{ filename: 'bundle.pdf', contentType: 'application/pdf', s3Key: `bundle-${i}.pdf` }],
        }),
      );
      // As send/sender.ts: the files are held in the budget from the read until SES answers.
      const release = await objects.reserve(email);
      try {
        const parts = await objects.parts(email);
        await ses.send(new SendEmailCommand(buildSendEmailInput(email, sender, `k${i}`, undefined, parts)));
      } finally {
        release();
      }
    }),
  );
  const memoryMb = process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? 'default';
  process.stdout.write(JSON.stringify({ count, memoryMb, peakRssMib: peakRssMib() }) + '\n');
}

function main(): void {
  const counts = process.argv.slice(2).map(Number);
  for (const count of counts.length > 0 ? counts : [1, 10]) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', __filename, '--child', String(count)], {
      encoding: 'utf8',
      env: process.env,
    });
    process.stdout.write(out);
  }
}

if (process.argv[2] === '--child') void child(Number(process.argv[3]));
else main();
