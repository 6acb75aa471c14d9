/**
 * The pipeline's topic, subscribed to the work queue with the SNS envelope
 * (raw message delivery off: the handler reads the MessageId from it) and a
 * dead-letter queue for what SNS cannot deliver.
 */
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** The topic, encrypted with `topicKey`, TLS only, subscribed to `queue`; in `scope` (the pipeline). */
export function buildTopic(
  scope: Construct,
  props: {
    readonly topicKey: kms.IKey;
    readonly queue: sqs.IQueue;
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
  return topic;
}
