/**
 * The outcome stage's view of an SQS record: what the outcomes read from it and put on the
 * copy they send to a queue (a retry to the work queue, a dead letter to the DLQ): the
 * receive count, and the record's own message attributes, which the copy keeps.
 */
import type { SQSRecord } from 'aws-lambda';
import type { ChangeMessageVisibilityCommand, MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import { RETRY_ATTRIBUTE } from '../../kernel/names';

/** The SQS calls the outcomes make (a subset of SQSClient). */
export interface QueueClient {
  send(command: SendMessageCommand | ChangeMessageVisibilityCommand): Promise<unknown>;
}

/** SQS's ApproximateReceiveCount of the record (1 when absent). */
export function receiveCount(record: SQSRecord): number {
  return Number(record.attributes?.ApproximateReceiveCount ?? '1');
}

/**
 * Characters SQS refuses in a message (its body and String attributes): C0 controls but tab, LF and
 * CR, U+FFFE, U+FFFF and lone surrogates. A reason can quote a field name from a hostile body.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_FOR_SQS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udfff]/gu;

/**
 * A String message attribute. Characters SQS would refuse (and with them the whole SendMessage, so
 * a dead letter could never be written) are written as `\uXXXX` instead.
 */
export function attr(value: string): MessageAttributeValue {
  const text = value.replace(NOT_FOR_SQS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return { DataType: 'String', StringValue: text };
}

/** Copies the record's own message attributes (e.g. a raw message's key) so a redrive keeps them. */
export function originalAttributes(record: SQSRecord): Record<string, MessageAttributeValue> {
  const ours = new Set<string>(Object.values(RETRY_ATTRIBUTE));
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined && !ours.has(name))
      out[name] = { DataType: value.dataType || 'String', StringValue: value.stringValue };
  }
  return out;
}
