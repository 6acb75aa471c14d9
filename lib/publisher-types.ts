/**
 * The publisher client's types and constants: its props, a publish's options and results, and the
 * limits SNS sets. publisher.ts re-exports them.
 */
import type { SNSClient, SNSClientConfig } from '@aws-sdk/client-sns';
import type { ValidationIssue } from '../lambdas/kernel/contract';
import type { AttachmentUploads, PublishableEmail } from './publisher-attachments';

/** The pipeline's default `maxScheduleAheadSeconds` (lib/settings/declaration.ts): 24 hours. */
export const DEFAULT_MAX_SCHEDULE_AHEAD_SECONDS = 24 * 60 * 60;

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
  /**
   * The pipeline's cancel URL (the stack's `CancelUrl` output), for {@link EmailPublisher.cancel}; the
   * SNS client's credentials sign the request (their principal must be granted `grantCancel`, or be
   * one of the pipeline's `cancelPrincipals`: IAM on that URL decides).
   * @default none: cancel throws
   */
  readonly cancelUrl?: string;
  /**
   * @deprecated the status URL no longer cancels (it answers 405): give {@link cancelUrl}.
   */
  readonly statusUrl?: string;
  /**
   * The pipeline's high-priority topic (the stack's `HighPriorityTopicArn` output): where
   * `priority: 'high'` mail is published. Its publishers are the pipeline's
   * `highPriorityPublisherPrincipals` (or `grantPublishHighPriority`), not everyone who may publish.
   * @default none: high-priority mail goes to `topicArn` with the `priority` attribute (what
   * pipelines before the high-priority topic routed on; a current pipeline sends it the normal lane)
   */
  readonly highPriorityTopicArn?: string;
  /**
   * The team this client publishes for, when `topicArn` is a team's topic (the stack's
   * `<team>TopicArn` output): its cancels name the team, so they cancel the team's key
   * (`<team>#<key>`), the one its mail was sent under, and the files it uploads go under the team's
   * prefix `<team>/` (the uploader needs `grantAttachmentUpload(principal, { team })`).
   * @default none: the pipeline's own topic, keys as given
   */
  readonly team?: string;
  /**
   * The pipeline's `maxScheduleAheadSeconds`: a `sendAt` further ahead of this client's clock is
   * refused before publishing (the pipeline measures from when the message reached its queue).
   * @default 86400 (the pipeline's default)
   */
  readonly maxScheduleAheadSeconds?: number;
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
  /**
   * Not sent before this instant, sent once after it: the message's `sendAt` (contract v1.2), as a
   * Date or an RFC 3339 string with an offset. At most `maxScheduleAheadSeconds` ahead.
   * @default the message's own `sendAt`, if any: sent at once otherwise
   */
  readonly sendAt?: Date | string;
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
