/**
 * The publisher client: publishes emails to the pipeline's topic, one at a time or in batches,
 * each checked first with the contract code the pipeline's function applies (validateEmail and the
 * idempotency key rules), so that a message the pipeline would refuse is never published. Files
 * given as bytes are placed inline or uploaded to the attachments bucket (publisher-attachments.ts). A message may wait for a time (`sendAt`), and a key not yet sent
 * may be cancelled (`cancel`, a signed DELETE to the status URL: status-url.ts).
 */
import {
  PublishBatchCommand,
  PublishCommand,
  SNSClient,
  type MessageAttributeValue,
  type PublishBatchRequestEntry,
  type PublishBatchResponse,
} from '@aws-sdk/client-sns';
import { PRIORITY_ATTRIBUTE } from '../lambdas/kernel/names';
import { TEAM_NAME } from '../lambdas/kernel/teams';
import { valueTooDeep } from '../lambdas/kernel/contract/json-depth';
import { cancelAtCancelUrl, type CancelResult } from './status-url';
import {
  CONTRACT,
  idempotencyKeyIssues,
  IDEMPOTENCY_KEY_ATTRIBUTE,
  InvalidMessageError,
  KEY_FIELD,
  normalizeIdempotencyKey,
  readSendAt,
  sendAtRangeProblem,
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
export type { CancelOutcome, CancelResult } from './status-url';
export { StatusUrlError } from './status-url';

import {
  DEFAULT_MAX_SCHEDULE_AHEAD_SECONDS,
  PRIORITIES,
  SNS_LIMITS,
  type BatchEntry,
  type BatchEntryError,
  type BatchEntryResult,
  type BatchPublished,
  type EmailPublisherProps,
  type PublishOptions,
  type Published,
} from './publisher-types';

export * from './publisher-types';
export type { Addresses, EmailMessage, EmailMessageInput, ValidationIssue } from '../lambdas/kernel/contract';

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

/** The message with the `sendAt` option in it (which must agree with the message's own, if any). */
function withSendAt(message: unknown, sendAt: PublishOptions['sendAt'], issues: ValidationIssue[]): unknown {
  if (sendAt === undefined) return message;
  const text = sendAt instanceof Date ? sendAt.toISOString() : sendAt;
  const own = (message as { sendAt?: unknown } | null)?.sendAt;
  if (own !== undefined && own !== text) {
    issues.push({ field: 'sendAt', reason: `is given twice, as ${JSON.stringify(own)} and as the option ${text}` });
  }
  return typeof message === 'object' && message !== null ? { ...message, sendAt: text } : message;
}

/** Why the email's `sendAt` is too far ahead of this clock, as an issue. */
function rangeIssues(email: EmailMessage | undefined, maxAheadSeconds: number, nowMs: number): ValidationIssue[] {
  const read = email?.sendAt === undefined ? undefined : readSendAt(email.sendAt);
  const problem = read?.ok ? sendAtRangeProblem(read.ms, nowMs, maxAheadSeconds) : undefined;
  return problem === undefined ? [] : [{ field: 'sendAt', reason: problem }];
}

function prepare(
  input: unknown,
  options: PublishOptions,
  maxAheadSeconds = DEFAULT_MAX_SCHEDULE_AHEAD_SECONDS,
  nowMs = Date.now(),
): Prepared {
  const issues: ValidationIssue[] = [];
  const message = withSendAt(input, options.sendAt, issues);
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
  issues.push(...rangeIssues(email, maxAheadSeconds, nowMs));
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
  readonly highPriorityTopicArn: string | undefined;
  private readonly cancelUrl: string | undefined;
  /** The team whose topic this client publishes to (its cancels name it). */
  readonly team: string | undefined;
  private readonly maxAheadSeconds: number;

  constructor(props: EmailPublisherProps) {
    this.topicArn = props.topicArn;
    this.highPriorityTopicArn = props.highPriorityTopicArn;
    this.cancelUrl = props.cancelUrl;
    if (props.team !== undefined && !TEAM_NAME.test(props.team)) {
      throw new Error(
        `EmailPublisher: team ${JSON.stringify(props.team)} cannot be a team: a team name is 1 to 32 lowercase letters, digits or "-", starting with a letter`,
      );
    }
    this.team = props.team;
    this.maxAheadSeconds = props.maxScheduleAheadSeconds ?? DEFAULT_MAX_SCHEDULE_AHEAD_SECONDS;
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
    const prepared = prepare(placed.message, options, this.maxAheadSeconds);
    const topicArn = this.#topicFor(options.priority);
    await this.#uploader?.upload(placed.uploads);
    const { MessageId } = await this.sns.send(
      new PublishCommand({
        TopicArn: topicArn,
        Message: prepared.body,
        ...(prepared.attributes ? { MessageAttributes: prepared.attributes } : {}),
      }),
    );
    if (!MessageId) throw new Error(`SNS answered the publish to ${topicArn} without a MessageId`);
    return { messageId: MessageId, dedupeKey: prepared.key ?? MessageId };
  }

  /**
   * The topic of a lane: high-priority mail goes to the pipeline's high-priority topic, whose
   * publishers IAM decides. Without {@link EmailPublisherProps.highPriorityTopicArn}, to the topic
   * with the `priority` attribute, which pipelines before the high-priority topic routed on (a
   * pipeline with one ignores the attribute: the mail goes the normal lane).
   */
  #topicFor(priority: PublishOptions['priority']): string {
    return priority === 'high' && this.highPriorityTopicArn !== undefined ? this.highPriorityTopicArn : this.topicArn;
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
        checked.push({ ...prepare(placed.message, entry, this.maxAheadSeconds), index, uploads: placed.uploads });
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
    // One PublishBatch names one topic: each lane's entries in requests of their own.
    const lanes = [
      ready.filter((e) => entries[e.index]?.priority !== 'high'),
      ready.filter((e) => entries[e.index]?.priority === 'high'),
    ];
    for (const batch of lanes.flatMap((lane) => batches(lane))) {
      const topicArn = this.#topicFor(entries[batch[0]?.index ?? 0]?.priority);
      const requestEntries: PublishBatchRequestEntry[] = batch.map((entry) => ({
        Id: String(entry.index),
        Message: entry.body,
        ...(entry.attributes ? { MessageAttributes: entry.attributes } : {}),
      }));
      let response: PublishBatchResponse;
      try {
        response = await this.sns.send(
          new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: requestEntries }),
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

  /**
   * Cancels a key not yet sent (a scheduled email, or one still waiting in the queue): it is never
   * sent, and its status is `cancelled`, with when and by whom (this client's IAM identity). Resolves
   * with the outcome: `cancelled`, `already-cancelled` (cancelling twice is harmless) or `too-late`
   * (claimed, in progress or sent: the report says which; nothing was changed). Throws
   * {@link StatusUrlError} when the cancel URL refuses the request (403: no lambda:InvokeFunctionUrl
   * on it). One signed `DELETE <cancelUrl><key>` (`?team=NAME` for a team's client: its key is
   * `<team>#<key>`): the cancel function alone holds the write, and IAM
   * on its URL decides who may call it (docs/contract.md, Scheduling and cancelling).
   */
  async cancel(key: string): Promise<CancelResult> {
    if (this.cancelUrl === undefined) {
      throw new Error('EmailPublisher.cancel needs the cancelUrl prop (the stack output CancelUrl)');
    }
    const [issue] = idempotencyKeyIssues(key);
    if (issue) throw new InvalidMessageError('InvalidKey', [issue]);
    const credentials = await this.sns.config.credentials();
    const region = await this.sns.config.region();
    return cancelAtCancelUrl(
      this.cancelUrl,
      normalizeIdempotencyKey(key),
      { credentials, region },
      this.team !== undefined ? { team: this.team } : {},
    );
  }

  /** Releases the SNS client (and the S3 client) if this publisher built it. */
  destroy(): void {
    if (this.ownsClient) this.sns.destroy();
    this.#uploader?.destroy();
  }

  /** The message with its files placed (inline, or by s3Key in the bucket), and the uploads to do. */
  #place(message: PublishableEmail, options: PublishOptions): Placed {
    return placeAttachments(message, options.idempotencyKey, this.#uploads, this.team);
  }
}
