/**
 * The error codes a dead letter can carry (its `error-code` attribute, what `dlq list --summary`
 * counts), so that `--code` is checked before anything is read or changed: a typo would otherwise
 * select nothing, and `dlq delete --code` or `redrive --code` would say "0 message(s)" as if the DLQ
 * held none. The send function's permanent failures (lambdas/send-email: parse.ts, classify.ts, the
 * contract's checks, schedule.ts, send/attachments.ts), the end of the retry budget, and SQS's own
 * redrive (no code of ours). test/unit/lib/cli/codes.test.ts reads the sources to keep this complete.
 */
import { suggestion, UsageError } from './errors';

export const ERROR_CODES: Readonly<Record<string, string>> = {
  // The record itself (parse.ts, the contract)
  InvalidJson: 'the body is not JSON (or nested too deep)',
  NotAnEnvelope: 'the body is not an SNS notification (published to the queue, not the topic)',
  InvalidEnvelope: 'the SNS envelope is malformed',
  ForeignTopic: "the notification did not come from the pipeline's topic",
  UnreadableBody: 'the body could not be read',
  InvalidMessage: 'the message breaks the contract (the reason names the field)',
  InvalidKey: 'the idempotency-key attribute is invalid',
  MissingIdempotencyKey: 'the message has no dedupe key',
  KeyReusedWithDifferentContent: 'the key was already used for a different email',
  SendAtOutOfRange: 'sendAt is further ahead than maxScheduleAheadSeconds allows',
  AttachmentUnreadable: 'an attachment in the bucket is missing or unreadable',
  // SES refused the email (classify.ts)
  MessageRejected: 'SES rejected the email',
  BadRequestException: 'SES refused the request as malformed',
  NotFoundException: 'SES found no such template, identity or configuration set',
  MailFromDomainNotVerifiedException: 'the MAIL FROM domain is not verified',
  InvalidParameterValue: 'SES refused a parameter',
  // Retried until the budget was spent (retry-budget.ts): the reason names the last error
  RetryBudgetExhausted: 'retried past the retry budget; the reason names the last error',
  // No code of ours: SQS moved it after maxReceiveCount receives (a crash loop), or SNS could not deliver it
  MaxReceiveCountExceeded: 'moved by SQS after maxReceiveCount receives, or undeliverable by SNS',
};

export const ERROR_CODE_NAMES: readonly string[] = Object.keys(ERROR_CODES);

/** `code` when it is a known code; else a usage error with the closest known one. */
export function knownCode(code: string, usage: string): string {
  if (Object.hasOwn(ERROR_CODES, code)) return code;
  const match = suggestion(code, ERROR_CODE_NAMES);
  throw new UsageError(
    `unknown error code "${code}"${match}: dlq list --summary shows the codes a DLQ holds; dlq --help lists them all`,
    usage,
  );
}
