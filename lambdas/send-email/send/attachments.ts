/**
 * The send stage's attachments: objects in the pipeline's attachments bucket (contract v1.2,
 * `s3Key`) and the SES Attachment parts of every file.
 *
 * Before the claim, {@link AttachmentObjects.fingerprint} reads each object's ETag (HeadObject) and
 * writes it into the email: the claim's payload hash covers the email, so the same key with a
 * changed object is KeyReusedWithDifferentContent, as changed inline bytes are. At the send, the
 * objects are read (GetObject) with `If-Match` on those ETags: the bytes mailed are the bytes
 * hashed, and an object replaced in between fails the send before SES (retryable: the next
 * attempt hashes the new object, and nothing was sent). The object store (two SigV4-signed
 * requests, s3-store.ts) is built on the first object.
 */
import type { Attachment as SesAttachment } from '@aws-sdk/client-sesv2';
import { ATTACHMENT_LIMITS, base64Bytes, InvalidMessageError, type EmailMessage } from '../../kernel/contract';
import { RetryableError } from '../../kernel/errors';
import { createByteBudget, type ByteBudget, type Release } from './byte-budget';
import { createS3Store, type ObjectStore } from './s3-store';

export type { ObjectStore } from './s3-store';

/** The send stage's use of the bucket. */
export interface AttachmentObjects {
  /**
   * The email with each object's ETag written into its attachment (the email as it is when it has
   * none). Throws InvalidMessageError (permanent) for an object that cannot be read or files too
   * large together, RetryableError when S3 does not answer.
   */
  fingerprint(email: EmailMessage): Promise<EmailMessage>;
  /**
   * Waits until the container's byte budget (send/byte-budget.ts) has room for the files of a
   * fingerprinted email, and holds it until the release: read the parts and send under it.
   */
  reserve(email: EmailMessage): Promise<Release>;
  /** The SES attachments of a fingerprinted email: inline files decoded, objects read at their ETag. */
  parts(email: EmailMessage): Promise<SesAttachment[] | undefined>;
}

/** Object sizes the fingerprint saw, kept for the reservation at the send (a few, newest last). */
const SIZES_KEPT = 1000;

/** S3's error name and HTTP status, whatever threw. */
function s3Failure(error: unknown): { readonly name: string; readonly status: number | undefined } {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const status = e?.$metadata?.httpStatusCode;
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    status: typeof status === 'number' ? status : undefined,
  };
}

/** Not there, or not readable by the send function (without s3:ListBucket, S3 says 403 for a missing key). */
function unreadable(error: unknown): boolean {
  const { name, status } = s3Failure(error);
  return status === 404 || status === 403 || name === 'NotFound' || name === 'NoSuchKey' || name === 'AccessDenied';
}

function storeUnavailable(error: unknown, what: string): RetryableError {
  const { name } = s3Failure(error);
  return new RetryableError('AttachmentStoreUnavailable', `${what}: ${name}`, { cause: error });
}

/** The send stage over `store` (none: a message with an s3Key is refused, as no bucket is configured). */
export function createAttachmentObjects(
  store: ObjectStore | undefined,
  budget: ByteBudget = createByteBudget(Number.MAX_SAFE_INTEGER),
): AttachmentObjects {
  const sizes = new Map<string, number>();
  const sizeKey = (s3Key: string, etag: string) => `${etag}\u0000${s3Key}`;
  const remember = (s3Key: string, etag: string, size: number) => {
    sizes.delete(sizeKey(s3Key, etag));
    sizes.set(sizeKey(s3Key, etag), size);
    if (sizes.size > SIZES_KEPT) sizes.delete(sizes.keys().next().value as string);
  };
  /** An object's size: as fingerprinted, else asked again (its ETag unchanged, or the read fails anyway). */
  const objectSize = async (s3Key: string, etag: string | undefined): Promise<number> => {
    const known = etag === undefined ? undefined : sizes.get(sizeKey(s3Key, etag));
    if (known !== undefined) return known;
    try {
      return (await store?.head(s3Key))?.size ?? 0;
    } catch {
      return 0; // The read that follows reports what is wrong with the object, under its field.
    }
  };
  return {
    async fingerprint(email) {
      const attachments = email.attachments;
      if (!attachments?.some((a) => 's3Key' in a)) return email;
      let total = 0;
      const fingerprinted = await Promise.all(
        attachments.map(async (attachment, i) => {
          if (!('s3Key' in attachment)) {
            total += base64Bytes(attachment.content);
            return attachment;
          }
          const field = `attachments[${i}].s3Key`;
          if (!store)
            throw new InvalidMessageError('AttachmentUnreadable', [
              { field, reason: 'no attachments bucket is configured' },
            ]);
          let head: { readonly etag: string; readonly size: number };
          try {
            head = await store.head(attachment.s3Key);
          } catch (error) {
            if (!unreadable(error)) throw storeUnavailable(error, `${field}: the attachments bucket did not answer`);
            throw new InvalidMessageError('AttachmentUnreadable', [
              {
                field,
                reason: 'no object the pipeline can read at this key in the attachments bucket (missing or expired?)',
              },
            ]);
          }
          total += head.size;
          remember(attachment.s3Key, head.etag, head.size);
          return { ...attachment, etag: head.etag };
        }),
      );
      if (total > ATTACHMENT_LIMITS.maxTotalBytes) {
        throw new InvalidMessageError('InvalidMessage', [
          {
            field: 'attachments',
            reason: `are ${total} bytes together, over the limit of ${ATTACHMENT_LIMITS.maxTotalBytes}`,
          },
        ]);
      }
      return { ...email, attachments: fingerprinted };
    },

    async reserve(email) {
      let bytes = 0;
      for (const attachment of email.attachments ?? []) {
        bytes +=
          'content' in attachment
            ? base64Bytes(attachment.content)
            : await objectSize(attachment.s3Key, attachment.etag);
      }
      return budget.acquire(bytes);
    },

    async parts(email) {
      if (!email.attachments) return undefined;
      return Promise.all(
        email.attachments.map(async (attachment, i): Promise<SesAttachment> => {
          let raw: Uint8Array;
          if ('content' in attachment) raw = Buffer.from(attachment.content, 'base64');
          else {
            const field = `attachments[${i}].s3Key`;
            if (!store || attachment.etag === undefined) throw new Error(`${field}: read before its fingerprint`);
            try {
              raw = await store.get(attachment.s3Key, attachment.etag);
            } catch (error) {
              if (s3Failure(error).status === 412) {
                throw new RetryableError(
                  'AttachmentChanged',
                  `${field}: the object changed since its fingerprint; not sent`,
                  {
                    cause: error,
                  },
                );
              }
              if (unreadable(error)) {
                throw new InvalidMessageError('AttachmentUnreadable', [
                  { field, reason: 'the object can no longer be read' },
                ]);
              }
              throw storeUnavailable(error, `${field}: the attachments bucket did not answer`);
            }
          }
          return {
            FileName: attachment.filename,
            ContentType: attachment.contentType,
            ContentDisposition: attachment.disposition === 'inline' ? 'INLINE' : 'ATTACHMENT',
            ContentTransferEncoding: 'BASE64',
            ...(attachment.contentId !== undefined ? { ContentId: attachment.contentId } : {}),
            RawContent: raw,
          };
        }),
      );
    },
  };
}

/**
 * The attachments bucket through S3 (s3-store.ts), its client built on the first object: a
 * container that never sends one never resolves the client's configuration.
 */
export function s3ObjectStore(bucket: string, requestTimeoutMs: number): ObjectStore {
  let store: ObjectStore | undefined;
  const load = () => (store ??= createS3Store(bucket, requestTimeoutMs));
  return { head: (key) => load().head(key), get: (key, etag) => load().get(key, etag) };
}
