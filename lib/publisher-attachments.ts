/**
 * The publisher client's attachments (contract v1.2): files given as bytes travel inline (base64)
 * while the SNS message holds them, and the largest go to the pipeline's attachments bucket, named
 * by `s3Key`, when it would not. An uploaded object is never overwritten (PutObject If-None-Match),
 * under a key made of the idempotency key and the file's SHA-256: a publish retried with the same
 * key names the same unchanged object, so the pipeline's key-reuse check (which covers the
 * object's ETag) sees the same email. The S3 client is loaded on the first upload only.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import {
  ATTACHMENT_LIMITS,
  CONTRACT,
  InvalidMessageError,
  type AttachmentInput,
  type EmailMessageInput,
} from '../lambdas/kernel/contract';

/** A file given by its bytes: the publisher decides whether it travels inline or by s3Key. */
export interface FileAttachment {
  readonly filename: string;
  readonly contentType: string;
  /** The file's bytes (a Buffer is a Uint8Array). */
  readonly content: Uint8Array;
  /** @default "attachment" */
  readonly disposition?: 'attachment' | 'inline';
  /** Required with `inline`: the HTML shows the part at `cid:<contentId>`. @default none */
  readonly contentId?: string;
}

/** An attachment as the publisher client takes it: the contract's, or a file by its bytes. */
export type PublisherAttachment = AttachmentInput | FileAttachment;

/** A message as the publisher client takes it: the contract's, with files allowed as bytes. */
export type PublishableEmail = EmailMessageInput extends infer T
  ? T extends unknown
    ? Omit<T, 'attachments'> & { readonly attachments?: readonly PublisherAttachment[] }
    : never
  : never;

/** Where a file too large to travel inline goes. */
export interface AttachmentUploads {
  /** The bucket: the stack's `AttachmentsBucketName` output. */
  readonly bucket: string;
  /** The S3 client, or the configuration of one to build on the first upload. @default the usual AWS settings */
  readonly s3?: S3Client | S3ClientConfig;
}

/** A message with its files placed, and the uploads that placement needs (done only once the message is valid). */
export interface Placed {
  readonly message: unknown;
  readonly uploads: readonly { readonly key: string; readonly file: FileAttachment }[];
}

function isFile(attachment: PublisherAttachment): attachment is FileAttachment {
  return attachment.content instanceof Uint8Array;
}

const utf8 = (text: unknown): number => (typeof text === 'string' ? Buffer.byteLength(text) : 0);
const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;
const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

/**
 * Places each file: inline (base64) while the content and the inline files stay within the
 * contract's limit, the largest files by s3Key otherwise (or an issue on `attachments[i].content`
 * when no bucket is given). `idempotencyKey` names the objects (a random id without one), under
 * `<team>/` for a team's publisher.
 */
export function placeAttachments(
  message: PublishableEmail,
  idempotencyKey: string | undefined,
  uploads: AttachmentUploads | undefined,
  team?: string,
): Placed {
  const attachments = message.attachments;
  if (!attachments?.some(isFile)) return { message, uploads: [] };
  const m = message as Record<string, unknown>;
  const template = m.template as { data?: unknown } | undefined;
  let inline =
    utf8(m.subject) +
    utf8(m.text) +
    utf8(m.html) +
    (template?.data !== undefined ? utf8(JSON.stringify(template.data)) : 0) +
    attachments.reduce((sum, a) => sum + (!isFile(a) && typeof a.content === 'string' ? a.content.length : 0), 0) +
    attachments.reduce((sum, a) => sum + (isFile(a) ? base64Length(a.content.length) : 0), 0);
  // The largest files leave first, until what stays inline fits.
  const byS3 = new Set<number>();
  const files = attachments
    .map((a, index) => ({ a, index }))
    .filter((f): f is { a: FileAttachment; index: number } => isFile(f.a))
    .sort((x, y) => y.a.content.length - x.a.content.length);
  for (const { a, index } of files) {
    if (inline <= CONTRACT.maxContentBytes) break;
    if (!uploads) {
      throw new InvalidMessageError('InvalidMessage', [
        {
          field: `attachments[${index}].content`,
          reason:
            `is ${a.content.length} bytes, too many to travel inline in the SNS message: give the publisher ` +
            'attachmentsBucket (the stack output AttachmentsBucketName) to send it by s3Key',
        },
      ]);
    }
    byS3.add(index);
    inline -= base64Length(a.content.length);
  }
  const scope = idempotencyKey !== undefined ? sha256(idempotencyKey.normalize('NFC')) : randomUUID();
  const planned: { key: string; file: FileAttachment }[] = [];
  const placed = attachments.map((a, index) => {
    if (!isFile(a)) return a;
    const { content, ...rest } = a;
    if (!byS3.has(index)) return { ...rest, content: Buffer.from(content).toString('base64') };
    // A team's objects live under its prefix, the only one its messages may name.
    const key = `${team !== undefined ? `${team}/` : ''}attachments/${scope}/${sha256(content)}`;
    planned.push({ key, file: a });
    return { ...rest, s3Key: key };
  });
  return { message: { ...message, attachments: placed }, uploads: planned };
}

/**
 * A 413 from the bucket's endpoint, said plainly: the SDK reports the HTML or text answer of a
 * body-size limit as "XML parse error", which names neither the file nor the limit. S3 itself
 * takes 5 GB in one PutObject, so the limit is the endpoint's (an emulator, a proxy).
 */
function tooLarge(bucket: string, key: string, file: FileAttachment, cause: unknown): Error {
  return Object.assign(
    new Error(
      `upload of attachment ${JSON.stringify(file.filename)} (${file.content.length} bytes) to ` +
        `s3://${bucket}/${key} refused: 413 Request body is too large. The contract allows ` +
        `${ATTACHMENT_LIMITS.maxTotalBytes} bytes of files and S3 takes up to 5 GB in one PutObject: ` +
        'the endpoint in front of the bucket (an emulator or a proxy) limits request bodies to less',
      { cause },
    ),
    { name: 'AttachmentTooLargeForEndpoint', $metadata: (cause as { $metadata?: unknown }).$metadata },
  );
}

/** Uploads files to the bucket, never over an object already there (the same key is the same bytes). */
export class AttachmentUploader {
  #client: Promise<{ s3: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> | undefined;
  #built: S3Client | undefined;

  constructor(private readonly options: AttachmentUploads) {}

  async upload(planned: Placed['uploads']): Promise<void> {
    if (planned.length === 0) return;
    const { s3, sdk } = await this.#load();
    for (const { key, file } of planned) {
      try {
        await s3.send(
          new sdk.PutObjectCommand({
            Bucket: this.options.bucket,
            Key: key,
            Body: file.content,
            ContentType: file.contentType,
            IfNoneMatch: '*',
          }),
        );
      } catch (error) {
        // 412: the object is there already (a publish retried with the same key): it is these bytes.
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 413) throw tooLarge(this.options.bucket, key, file, error);
        if (status !== 412) throw error;
      }
    }
  }

  /** Releases the S3 client if this uploader built it. */
  destroy(): void {
    this.#built?.destroy();
  }

  #load() {
    this.#client ??= import('@aws-sdk/client-s3').then((sdk) => {
      const given = this.options.s3;
      if (typeof (given as { send?: unknown } | undefined)?.send === 'function') return { s3: given as S3Client, sdk };
      this.#built = new sdk.S3Client({
        requestHandler: { connectionTimeout: 1000, requestTimeout: 30_000 },
        ...((given as S3ClientConfig | undefined) ?? {}),
      });
      return { s3: this.#built, sdk };
    });
    return this.#client;
  }
}
