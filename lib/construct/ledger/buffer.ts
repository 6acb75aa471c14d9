/**
 * The ledger's buffer between SES's events rule (events.ts) and the ledger function:
 * an encrypted queue that takes each event as EventBridge delivers it, and its
 * dead-letter queue, which also takes what EventBridge could not deliver. An event waits as long as SQS
 * allows: a ledger outage loses nothing. The ledger function may read the DLQ
 * too, through a mapping an operator enables to redrive it (functions.ts).
 */
import { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS } from '../../settings';
import { LEDGER_FUNCTIONS } from './functions';

/** What {@link buildBuffer} made. */
export interface LedgerBuffer {
  /** Between SES's events rule and the ledger function (EventBridge events). */
  readonly bufferQueue: sqs.Queue;
  /** Events the ledger function could not record, and what EventBridge could not deliver. */
  readonly bufferDeadLetterQueue: sqs.Queue;
}

/** The DLQ and the buffer; in `scope` (the ledger). */
export function buildBuffer(scope: Construct, props: { readonly queueKey: kms.IKey }): LedgerBuffer {
  const bufferDeadLetterQueue = new sqs.Queue(scope, 'BufferDeadLetterQueue', {
    // The ledger function reads it too, while an operator redrives it (its second, disabled mapping):
    // 6 x the function timeout, as for the buffer.
    visibilityTimeout: Duration.seconds(6 * LEDGER_FUNCTIONS.ledgerTimeoutSeconds),
    retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: props.queueKey,
    enforceSSL: true,
  });
  const bufferQueue = new sqs.Queue(scope, 'BufferQueue', {
    // 6 x the function timeout, as for the work queue.
    visibilityTimeout: Duration.seconds(6 * LEDGER_FUNCTIONS.ledgerTimeoutSeconds),
    // An event waits as long as SQS allows: a ledger outage loses nothing.
    retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
    deadLetterQueue: { queue: bufferDeadLetterQueue, maxReceiveCount: LEDGER_FUNCTIONS.maxReceiveCount },
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: props.queueKey,
    enforceSSL: true,
  });
  return { bufferQueue, bufferDeadLetterQueue };
}
