/**
 * What the outcomes read from an SQS record and put on the copy they send to a
 * queue (a retry to the work queue, a dead letter to the DLQ): the receive count,
 * and the record's own message attributes, which the copy keeps.
 */
import type { SQSRecord } from 'aws-lambda';
import type { ChangeMessageVisibilityCommand, MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import { RETRY_ATTRIBUTE } from './retry-budget';

/** The SQS calls the outcomes make (a subset of SQSClient). */
export interface QueueClient {
  send(command: SendMessageCommand | ChangeMessageVisibilityCommand): Promise<unknown>;
}

/** SQS's ApproximateReceiveCount of the record (1 when absent). */
export function receiveCount(record: SQSRecord): number {
  return Number(record.attributes?.ApproximateReceiveCount ?? '1');
}

export function attr(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
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
