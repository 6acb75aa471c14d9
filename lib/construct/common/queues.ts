/**
 * What the pipeline's queues share: how long a dead-letter queue keeps a message, and the queue
 * policy statement that names who may send.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
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
