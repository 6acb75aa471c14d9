/**
 * Queue records as SQS hands them to the function: the SNS envelope (raw
 * message delivery off) and the Lambda `SQSRecord` around a body. For code
 * that invokes the handler without a queue (tests, the benchmark).
 */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { IDEMPOTENCY_KEY_ATTRIBUTE } from '../../../lambdas/kernel/contract';
import { toSqsRecord } from './event-source';
import { LOCAL_REGION } from './emulator-config';

export interface EnvelopeOptions {
  /** @default a new UUID */
  readonly messageId?: string;
  /** @default a topic in the local account */
  readonly topicArn?: string;
  /** Sets the SNS message attribute `idempotency-key` (a String). */
  readonly key?: string;
}

/** The SNS notification envelope around a message; a string message passes through unchanged. */
export function snsEnvelope(message: unknown, options: EnvelopeOptions = {}): Record<string, unknown> {
  return {
    Type: 'Notification',
    MessageId: options.messageId ?? randomUUID(),
    TopicArn: options.topicArn ?? `arn:aws:sns:${LOCAL_REGION}:000000000000:email-pipeline-topic`,
    Message: typeof message === 'string' ? message : JSON.stringify(message),
    Timestamp: new Date().toISOString(),
    ...(options.key !== undefined
      ? { MessageAttributes: { [IDEMPOTENCY_KEY_ATTRIBUTE]: { Type: 'String', Value: options.key } } }
      : {}),
  };
}

/** A first delivery of `body` from the queue `queueArn`, as the event source builds it. */
export function queueRecord(body: string, queueArn: string): SQSRecord {
  const now = String(Date.now());
  return toSqsRecord(
    {
      MessageId: randomUUID(),
      ReceiptHandle: `local-${randomUUID()}`,
      Body: body,
      Attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, ApproximateFirstReceiveTimestamp: now },
    },
    queueArn,
    LOCAL_REGION,
  );
}
