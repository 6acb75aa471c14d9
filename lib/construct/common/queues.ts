/**
 * What the pipeline's queues share: how long a dead-letter queue keeps a message, a dead-letter
 * queue only named queues may use, and the queue policy statement that names who may send.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS } from '../../settings';

/** How long the dead-letter queue keeps a message: the SQS maximum, so operators have time to look. */
export const DLQ_RETENTION = Duration.seconds(DLQ_RETENTION_SECONDS);

/**
 * A queue policy statement that denies sqs:SendMessage to every principal unless one of `allowed`
 * matches (`aws:SourceArn` of a service delivering, `aws:PrincipalArn` of a principal). A Deny, so
 * that no IAM policy of the account can open the queue. The keys of one `ArnNotEquals` all must
 * hold for the deny to apply: one allowed key that matches is enough to pass.
 */
export function onlyTheseSend(
  queue: sqs.IQueue,
  sid: string,
  allowed: Readonly<Record<string, readonly string[]>>,
): void {
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnNotEquals: allowed },
    }),
  );
}

/**
 * A dead-letter queue (kept {@link DLQ_RETENTION}, encrypted with `queueKey`, TLS only) that only
 * the queues named `sourceQueueNames` may use: its RedriveAllowPolicy names them by ARN, built
 * from their names (set on the L1: the L2 would need the queue objects, which need the DLQ first).
 */
export function deadLetterQueueFor(
  scope: Construct,
  id: string,
  queueKey: kms.IKey,
  sourceQueueNames: readonly string[],
): sqs.Queue {
  const deadLetterQueue = new sqs.Queue(scope, id, {
    retentionPeriod: DLQ_RETENTION,
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: queueKey,
    enforceSSL: true,
  });
  (deadLetterQueue.node.defaultChild as sqs.CfnQueue).redriveAllowPolicy = {
    redrivePermission: 'byQueue',
    sourceQueueArns: sourceQueueNames.map((name) =>
      Stack.of(scope).formatArn({ service: 'sqs', resource: name, arnFormat: ArnFormat.NO_RESOURCE_NAME }),
    ),
  };
  return deadLetterQueue;
}
