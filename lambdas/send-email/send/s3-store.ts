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
      return answer.Body.transformToByteArray();
    },
  };
}
