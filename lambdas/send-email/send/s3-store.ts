/**
 * The attachments bucket through S3: HeadObject and GetObject (If-Match), the only calls the send
 * function is granted. send/attachments.ts builds it on the first object (the bundle keeps only
 * these two commands of S3's).
 */
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { httpHandler } from '../../runtime/clients';

/** What the send stage reads of the bucket (S3 in production, a fake in tests). */
export interface ObjectStore {
  /** The object's ETag and size; throws S3's error (NotFound, AccessDenied, ...). */
  head(key: string): Promise<{ readonly etag: string; readonly size: number }>;
  /** The object's bytes, if its ETag is still `etag`; throws S3's error (412 PreconditionFailed if not). */
  get(key: string, etag: string): Promise<Uint8Array>;
}

/** An ObjectStore over `bucket` (S3 answers within `requestTimeoutMs`, three attempts). */
export function createS3Store(bucket: string, requestTimeoutMs: number): ObjectStore {
  const s3 = new S3Client({ requestHandler: httpHandler(requestTimeoutMs), maxAttempts: 3 });
  return {
    async head(key) {
      const answer = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { etag: answer.ETag ?? '', size: answer.ContentLength ?? 0 };
    },
    async get(key, etag) {
      const answer = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: etag }));
      if (!answer.Body) throw new Error(`GetObject ${key}: no body`);
      const length = answer.ContentLength;
      const body = answer.Body as unknown;
      if (typeof length !== 'number' || !isAsyncIterable(body)) return answer.Body.transformToByteArray();
      return readInto(body, length, key);
    },
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === 'function';
}

/**
 * The body's chunks copied into one buffer of the announced length as they arrive: the file is
 * held once, where collecting the chunks and joining them held it twice at the end of the read.
 */
async function readInto(body: AsyncIterable<Uint8Array>, length: number, key: string): Promise<Uint8Array> {
  const bytes = Buffer.allocUnsafe(length);
  let offset = 0;
  for await (const chunk of body) {
    if (offset + chunk.byteLength > length) throw new Error(`GetObject ${key}: more bytes than its ContentLength`);
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  if (offset !== length) throw new Error(`GetObject ${key}: ${offset} bytes of ${length}`);
  return bytes;
}
