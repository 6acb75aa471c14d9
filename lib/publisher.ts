/**
 * The publisher client: publishes emails to the pipeline's topic, one at a time or in batches,
 * each checked first with the contract code the pipeline's function applies (validateEmail and the
 * idempotency key rules), so that a message the pipeline would refuse is never published. Files
 * given as bytes are placed inline or uploaded to the attachments bucket (publisher-attachments.ts).
 */
import {
  PublishBatchCommand,
  PublishCommand,
  SNSClient,
  type MessageAttributeValue,
  type PublishBatchRequestEntry,
  type PublishBatchResponse,
  type SNSClientConfig,
} from '@aws-sdk/client-sns';
import { PRIORITY_ATTRIBUTE } from '../lambdas/kernel/names';
import { valueTooDeep } from '../lambdas/kernel/contract/json-depth';
import {
  CONTRACT,
  idempotencyKeyIssues,
  IDEMPOTENCY_KEY_ATTRIBUTE,
  InvalidMessageError,
  KEY_FIELD,
  normalizeIdempotencyKey,
  tooDeepIssue,
  validateEmail,
  type EmailMessage,
  type ValidationIssue,
} from '../lambdas/kernel/contract';
import {
  AttachmentUploader,
  placeAttachments,
  type AttachmentUploads,
  type Placed,
  type PublishableEmail,
} from './publisher-attachments';

export { IDEMPOTENCY_KEY_ATTRIBUTE, InvalidMessageError };
export type { FileAttachment, PublishableEmail, PublisherAttachment } from './publisher-attachments';
export type { Addresses, EmailMessage, EmailMessageInput, ValidationIssue } from '../lambdas/kernel/contract';

/** What SNS accepts: entries per PublishBatch request, and bytes per message and per request. */
export const SNS_LIMITS = {
  maxBatchEntries: 10,
  /** A message's body and attributes, in bytes. */
  maxMessageBytes: 256 * 1024,
  /** All the messages of one PublishBatch request together, in bytes. */
  maxBatchBytes: 256 * 1024,
} as const;

export interface EmailPublisherProps {
  /** The pipeline's topic: the stack's `TopicArn` output. */
  readonly topicArn: string;
  /**
   * The SNS client to publish with, or the configuration of one to build (then {@link EmailPublisher.destroy}
   * destroys it; a client given is left to its owner).
   * @default a client with the usual AWS region and credentials, a 1 s connection and a 10 s request timeout
   */
  readonly sns?: SNSClient | SNSClientConfig;
  /**
   * Where files given as bytes go when the SNS message cannot carry them inline (contract v1.2):
   * the stack's `AttachmentsBucketName` output, and optionally the S3 client or its configuration.
   * The publisher's principal needs `grantAttachmentUpload`.
   * @default none: such a file is refused (InvalidMessageError on its `attachments[i].content`)
   */
  readonly attachments?: AttachmentUploads;
}

export interface PublishOptions {
  /**
   * The dedupe key, sent as the SNS message attribute `idempotency-key` (String, in Unicode NFC as the
   * pipeline compares keys): messages published with the same key send one email, so a publish may be
   * retried safely. Checked as the pipeline does (1 to 256 characters, no control characters, no
   * surrounding spaces).
   * @default none: the SNS MessageId is the key, and a publish retried after a lost answer may send twice
   */
  readonly idempotencyKey?: string;
  /**
   * The lane, sent as the SNS message attribute `priority` (String): `high` mail (sign-in codes,
   * password resets) has its own queue and a reserved part of the rate, so it never waits behind a
   * newsletter. @default none: `normal`
   */
  readonly priority?: Priority;
}

/** The lanes a message may ask for (the `priority` message attribute). */
export const PRIORITIES = ['normal', 'high'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface Published {
  /** The SNS MessageId. */
  readonly messageId: string;
  /** The dedupe key the pipeline will use: the idempotency key (in Unicode NFC), else the MessageId. */
  readonly dedupeKey: string;
}

export interface BatchEntry extends PublishOptions {
  readonly message: PublishableEmail;
}

/** Why one entry of a batch was not published. */
export interface BatchEntryError {
  /**
   * `InvalidMessage` or `InvalidKey` (refused here, never sent), SNS's code for the entry
   * (e.g. `InternalError`), or the name of the error that failed the whole request.
   */
  readonly code: string;
  readonly message: string;
  /** The entry or the request is at fault (fix it: retrying as it is fails again). */
  readonly senderFault: boolean;
  /** Every problem with the message or key, each naming its field (for `InvalidMessage` and `InvalidKey`). */
  readonly issues?: readonly ValidationIssue[];
}

/** The outcome of one entry of a batch, at the entry's index in the list given. */
export type BatchEntryResult =
  | { readonly index: number; readonly ok: true; readonly messageId: string; readonly dedupeKey: string }
  | { readonly index: number; readonly ok: false; readonly error: BatchEntryError };

export interface BatchPublished {
  /** One result per entry, in the order given. */
  readonly results: readonly BatchEntryResult[];
  /** How many were published. */
  readonly published: number;
  /** How many were not (see each result's error). */
  readonly failed: number;
}

/** A message checked and ready to publish. */
interface Prepared {
  readonly email: EmailMessage;
  /** The dedupe key the pipeline will make of the idempotency key, if one was given. */
  readonly key?: string;
  readonly body: string;
  readonly attributes?: Record<string, MessageAttributeValue>;
  /** Body and attributes, as SNS counts a message's size. */
  readonly bytes: number;
}

/**
 * The message as the JSON text the pipeline will parse, or undefined with the issue: nested deeper
 * than the contract allows (checked first: JSON.stringify recurses once per level), a cycle, a BigInt,
 * a getter or toJSON that throws.
 */
function serialize(message: unknown, issues: ValidationIssue[]): { text: string | undefined } | undefined {
  try {
    const deep = valueTooDeep(message, CONTRACT.maxDepth);
    if (deep) {
      issues.push(tooDeepIssue(deep));
      return undefined;
    }
    return { text: JSON.stringify(message) as string | undefined };
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    const reason = error instanceof Error ? error.message : String(error);
    issues.push({ field: 'message', reason: `cannot be serialized as JSON (${name}: ${reason})` });
    return undefined;
  }
}

function prepare(message: unknown, options: PublishOptions): Prepared {
  const issues: ValidationIssue[] = [];
  const given = options.idempotencyKey;
  if (given !== undefined) issues.push(...idempotencyKeyIssues(given).slice(0, 1));
  const key = given !== undefined ? normalizeIdempotencyKey(given) : undefined;
  // What the pipeline will parse is the JSON text, so that is what is checked.
  const serialized = serialize(message, issues);
  const body = serialized?.text;
  let email: EmailMessage | undefined;
  if (serialized !== undefined) {
    try {
      email = validateEmail(body === undefined ? undefined : JSON.parse(body));
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      issues.push(...error.issues);
    }
  }
  const priority = options.priority;
  if (priority !== undefined && !(PRIORITIES as readonly string[]).includes(priority)) {
    issues.push({ field: `attribute ${PRIORITY_ATTRIBUTE}`, reason: `must be one of ${PRIORITIES.join(', ')}` });
  }
  const attributeValues: Record<string, string> = {
    ...(key !== undefined ? { [IDEMPOTENCY_KEY_ATTRIBUTE]: key } : {}),
    ...(priority !== undefined ? { [PRIORITY_ATTRIBUTE]: priority } : {}),
  };
  const attributes =
    Object.keys(attributeValues).length > 0
      ? Object.fromEntries(
          Object.entries(attributeValues).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
        )
      : undefined;
  const bytes =
    Buffer.byteLength(body ?? '') +
    Object.entries(attributeValues).reduce(
      (sum, [name, value]) => sum + Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(value),
      0,
    );
  if (email !== undefined && bytes > SNS_LIMITS.maxMessageBytes) {
    issues.push({
      field: 'message',
      reason: `is ${bytes} bytes as JSON, over SNS's limit of ${SNS_LIMITS.maxMessageBytes}`,
    });
  }
  if (issues.length > 0 || email === undefined || body === undefined) {
    const code = issues.every((i) => i.field === KEY_FIELD) ? 'InvalidKey' : 'InvalidMessage';
    throw new InvalidMessageError(code, issues);
  }
  return { email, ...(key !== undefined ? { key } : {}), body, ...(attributes ? { attributes } : {}), bytes };
}

/**
 * Checks a message (and its idempotency key) as the pipeline will, without publishing it, and
 * returns the email as the pipeline will send it. Throws {@link InvalidMessageError} listing
 * every problem, each with its field (`to[1]`, `subject`, `attribute idempotency-key`, ...).
 */
export function checkEmail(message: unknown, options: PublishOptions = {}): EmailMessage {
  return prepare(message, options).email;
}

/** Groups entries into PublishBatch requests: at most 10 entries and 256 KiB each. */
function batches<T extends { readonly bytes: number }>(entries: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (current.length === SNS_LIMITS.maxBatchEntries || bytes + entry.bytes > SNS_LIMITS.maxBatchBytes) {
      if (current.length > 0) out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The SDK error of a whole request as the error of each of its entries. */
function requestError(error: unknown): BatchEntryError {
  const fault = (error as { $fault?: string } | undefined)?.$fault;
  return error instanceof Error
    ? { code: error.name, message: error.message, senderFault: fault === 'client' }
    : { code: 'Error', message: String(error), senderFault: false };
}

/** A client, not its configuration (by shape: an app's own copy of the SDK has its own SNSClient class). */
function isClient(sns: EmailPublisherProps['sns']): sns is SNSClient {
  return typeof (sns as { send?: unknown } | undefined)?.send === 'function';
}

export class EmailPublisher {
  readonly topicArn: string;
  readonly sns: SNSClient;
  private readonly ownsClient: boolean;
  readonly #uploads: AttachmentUploads | undefined;
  readonly #uploader: AttachmentUploader | undefined;

  constructor(props: EmailPublisherProps) {
    this.topicArn = props.topicArn;
    this.#uploads = props.attachments;
    this.#uploader = props.attachments ? new AttachmentUploader(props.attachments) : undefined;
    const given = isClient(props.sns) ? props.sns : undefined;
    this.ownsClient = given === undefined;
    this.sns =
      given ??
      new SNSClient({ requestHandler: { connectionTimeout: 1000, requestTimeout: 10_000 }, ...(props.sns ?? {}) });
  }

  /**
   * Publishes one email. Throws {@link InvalidMessageError} (nothing published) when the message or
   * the key breaks the contract, or the SDK's error when SNS refuses or cannot be reached (with an
   * idempotency key, publishing again is safe).
   */
  async publish(message: PublishableEmail, options: PublishOptions = {}): Promise<Published> {
    const placed = this.#place(message, options);
    const prepared = prepare(placed.message, options);
    await this.#uploader?.upload(placed.uploads);
    const { MessageId } = await this.sns.send(
      new PublishCommand({
        TopicArn: this.topicArn,
        Message: prepared.body,
        ...(prepared.attributes ? { MessageAttributes: prepared.attributes } : {}),
      }),
    );
    if (!MessageId) throw new Error(`SNS answered the publish to ${this.topicArn} without a MessageId`);
    return { messageId: MessageId, dedupeKey: prepared.key ?? MessageId };
  }

  /**
   * Publishes many emails with SNS PublishBatch, as many requests as needed (10 entries and 256 KiB
   * each), one after another. Never throws for an entry: every entry gets a result, in the order
   * given. Entries that break the contract are reported and not sent; an entry SNS refuses, or every
   * entry of a request that failed, is reported with SNS's error (a request that failed may still
   * have published: entries with an idempotency key can be published again safely).
   */
  async publishBatch(entries: readonly BatchEntry[]): Promise<BatchPublished> {
    const results: BatchEntryResult[] = [];
    const checked: (Prepared & { readonly index: number; readonly uploads: Placed['uploads'] })[] = [];
    entries.forEach((entry, index) => {
      try {
        const placed = this.#place(entry.message, entry);
        checked.push({ ...prepare(placed.message, entry), index, uploads: placed.uploads });
      } catch (error) {
        if (!(error instanceof InvalidMessageError)) throw error;
        results[index] = {
          index,
          ok: false,
          error: { code: error.code, message: error.message, senderFault: true, issues: error.issues },
        };
      }
    });
    // Files by s3Key are in the bucket before a message names them; an entry whose upload fails is not sent.
    const ready: (Prepared & { readonly index: number })[] = [];
    for (const entry of checked) {
      try {
        await this.#uploader?.upload(entry.uploads);
        ready.push(entry);
      } catch (error) {
        results[entry.index] = { index: entry.index, ok: false, error: requestError(error) };
      }
    }
    for (const batch of batches(ready)) {
      const requestEntries: PublishBatchRequestEntry[] = batch.map((entry) => ({
        Id: String(entry.index),
        Message: entry.body,
        ...(entry.attributes ? { MessageAttributes: entry.attributes } : {}),
      }));
      let response: PublishBatchResponse;
      try {
        response = await this.sns.send(
          new PublishBatchCommand({ TopicArn: this.topicArn, PublishBatchRequestEntries: requestEntries }),
        );
      } catch (error) {
        for (const { index } of batch) results[index] = { index, ok: false, error: requestError(error) };
        continue;
      }
      const successful = new Map((response.Successful ?? []).map((s) => [s.Id, s.MessageId]));
      const failed = new Map((response.Failed ?? []).map((f) => [f.Id, f]));
      for (const { index, key } of batch) {
        const messageId = successful.get(String(index));
        const failure = failed.get(String(index));
        results[index] = messageId
          ? { index, ok: true, messageId, dedupeKey: key ?? messageId }
          : {
              index,
              ok: false,
              error: failure
                ? {
                    code: failure.Code ?? 'Unknown',
                    message: failure.Message ?? '',
                    senderFault: failure.SenderFault ?? false,
                  }
                : { code: 'NoResult', message: 'SNS answered without a result for this entry', senderFault: false },
            };
      }
    }
    const published = results.filter((r) => r.ok).length;
    return { results, published, failed: results.length - published };
  }

  /** Releases the SNS client (and the S3 client) if this publisher built it. */
  destroy(): void {
    if (this.ownsClient) this.sns.destroy();
    this.#uploader?.destroy();
  }

  /** The message with its files placed (inline, or by s3Key in the bucket), and the uploads to do. */
  #place(message: PublishableEmail, options: PublishOptions): Placed {
    return placeAttachments(message, options.idempotencyKey, this.#uploads);
  }
}
