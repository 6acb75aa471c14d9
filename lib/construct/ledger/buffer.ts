/**
 * The ledger's buffer between the events topic and the ledger function: an
 * encrypted queue subscribed with the SNS envelope, and its dead-letter queue,
 * which also takes what SNS could not deliver. An event waits as long as SQS
 * allows: a ledger outage loses nothing. The ledger function may read the DLQ
 * too, through a mapping an operator enables to redrive it (functions.ts).
 */
import { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS } from '../../settings';
import { LEDGER_FUNCTIONS } from './functions';

/** What {@link buildBuffer} made. */
export interface LedgerBuffer {
  /** Between the events topic and the ledger function (SNS envelope). */
  readonly bufferQueue: sqs.Queue;
  /** Events the ledger function could not record, and what SNS could not deliver. */
  readonly bufferDeadLetterQueue: sqs.Queue;
}

/** The DLQ and the buffer, subscribed to `eventsTopic`; in `scope` (the ledger). */
export function buildBuffer(
  scope: Construct,
  props: { readonly queueKey: kms.IKey; readonly eventsTopic: sns.ITopic },
): LedgerBuffer {
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
  // The SNS envelope, not raw: the ledger function reads SES's event from its Message. An event
  // SNS cannot deliver (a policy or key refusal) lands in the buffer's DLQ instead of being lost.
  props.eventsTopic.addSubscription(
    new SqsSubscription(bufferQueue, { rawMessageDelivery: false, deadLetterQueue: bufferDeadLetterQueue }),
  );
  return { bufferQueue, bufferDeadLetterQueue };
}
