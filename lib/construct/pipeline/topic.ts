/**
 * The pipeline's topic, subscribed to the work queue and the high-priority
 * queue with the SNS envelope (raw message delivery off: the handler reads the
 * MessageId from it) and a dead-letter queue for what SNS cannot deliver. The
 * high-priority queue's subscription filters on `priority = high`; the work
 * queue's has no filter, because SNS matches no filter against a message with
 * no message attributes at all (`exists: false` needs one), and such a message
 * must reach the work queue. Its copy of a high-priority message is a duplicate
 * of the one the high lane sends, suppressed by the dedupe key
 * (lambdas/send-email/send/lanes.ts).
 */
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** The high-priority queue's subscription filter: the String attribute `priority` equal to `high`. */
export const HIGH_PRIORITY_FILTER = { priority: sns.SubscriptionFilter.stringFilter({ allowlist: ['high'] }) };

/** The topic, encrypted with `topicKey`, TLS only, subscribed to `queue`; in `scope` (the pipeline). */
export function buildTopic(
  scope: Construct,
  props: {
    readonly topicKey: kms.IKey;
    readonly queue: sqs.IQueue;
    readonly highPriorityQueue: sqs.IQueue;
    readonly subscriptionDeadLetterQueue: sqs.IQueue;
  },
): sns.Topic {
  const topic = new sns.Topic(scope, 'Topic', { masterKey: props.topicKey, enforceSSL: true });
  // The handler reads the SNS MessageId from the envelope: raw delivery stays off.
  // The subscription also gives SNS (this topic only) use of the key to write to the queue.
  // What SNS cannot deliver (a policy or key refusal) goes to its own DLQ instead of being lost.
  topic.addSubscription(
    new SqsSubscription(props.queue, {
      rawMessageDelivery: false,
      deadLetterQueue: props.subscriptionDeadLetterQueue,
    }),
  );
  topic.addSubscription(
    new SqsSubscription(props.highPriorityQueue, {
      rawMessageDelivery: false,
      deadLetterQueue: props.subscriptionDeadLetterQueue,
      filterPolicy: HIGH_PRIORITY_FILTER,
    }),
  );
  return topic;
}
