/**
 * The outcome stage, for a record that will never send: a copy to the dead-letter queue,
 * its body and its own attributes as they came, with why it failed (DLQ_ATTRIBUTE);
 * the send ledger marks its key as dead-lettered.
 */
import type { SQSRecord } from 'aws-lambda';
import { SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SendConfirmation } from '../confirm';
import { DLQ_ATTRIBUTE } from '../../kernel/names';
import type { ParsedRecord } from '../parse';
import type { PipelineError } from '../../kernel/errors';
import { InvalidMessageError } from '../../kernel/contract';
import { attr, originalAttributes, receiveCount, type QueueClient } from './queue-record';
import type { Report } from './report';

export interface DeadLetterDeps {
  readonly deadLetterQueueUrl: string;
  readonly sqs: QueueClient;
  readonly report: Report;
  readonly now: () => number;
  /** The send ledger's side (confirm.ts). @default none */
  readonly confirm?: SendConfirmation | undefined;
}

/** Dead-letters a record; resolves once the copy is on the DLQ. */
export type DeadLetter = (record: SQSRecord, failure: PipelineError, parsed: ParsedRecord | undefined) => Promise<void>;

export function createDeadLetter(deps: DeadLetterDeps): DeadLetter {
  const { sqs, report, now } = deps;
  return async (record, failure, parsed) => {
    // What is known of a record that failed to parse comes with its error.
    const known = failure instanceof InvalidMessageError ? failure : undefined;
    const dedupeKey = parsed?.key ?? known?.dedupeKey;
    const snsMessageId = parsed?.snsMessageId ?? known?.snsMessageId;
    const attributes: Record<string, MessageAttributeValue> = {
      ...originalAttributes(record),
      [DLQ_ATTRIBUTE.errorClass]: attr(failure.failureClass),
      [DLQ_ATTRIBUTE.errorCode]: attr(failure.code),
      [DLQ_ATTRIBUTE.reason]: attr(failure.message.slice(0, 1024) || failure.code),
      [DLQ_ATTRIBUTE.failedAt]: attr(new Date(now()).toISOString()),
      [DLQ_ATTRIBUTE.sourceMessageId]: attr(record.messageId),
      [DLQ_ATTRIBUTE.receiveCount]: attr(String(receiveCount(record))),
      ...(dedupeKey ? { [DLQ_ATTRIBUTE.dedupeKey]: attr(dedupeKey) } : {}),
      ...(snsMessageId ? { [DLQ_ATTRIBUTE.snsMessageId]: attr(snsMessageId) } : {}),
    };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: deps.deadLetterQueueUrl,
        MessageBody: record.body,
        MessageAttributes: attributes,
      }),
    );
    if (dedupeKey) await deps.confirm?.deadLettered(dedupeKey, failure);
    report.deadLettered(record, parsed, failure, { dedupeKey, snsMessageId });
  };
}
