/**
 * The pipeline's topics: the topic, subscribed to the work queue, and the high-priority topic,
 * subscribed to the high-priority queue; each with the SNS envelope (raw message delivery off: the
 * handler reads the MessageId from it) and a dead-letter queue for what SNS cannot deliver.
 *
 * Priority is a permission: a message is high priority because its publisher may publish to the
 * high-priority topic (its own publisher list, grantPublishHighPriority), never because of an
 * attribute any publisher may set. Neither subscription filters, so no message is lost to a filter
 * and none is queued twice: each topic feeds one queue, and the queue policies admit only that topic.
 */
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What {@link buildTopics} made. */
export interface PipelineTopics {
  /** Feeds the work queue (the normal lane). */
  readonly topic: sns.Topic;
  /** Feeds the high-priority queue (the high lane), and nothing else. */
  readonly highPriorityTopic: sns.Topic;
}

/** Both topics, encrypted with `topicKey`, TLS only, each subscribed to its own queue; in `scope` (the pipeline). */
export function buildTopics(
  scope: Construct,
  props: {
    readonly topicKey: kms.IKey;
    readonly queue: sqs.IQueue;
    readonly highPriorityQueue: sqs.IQueue;
    readonly subscriptionDeadLetterQueue: sqs.IQueue;
  },
): PipelineTopics {
  // The handler reads the SNS MessageId from the envelope: raw delivery stays off.
  // The subscription also gives SNS (this topic only) use of the key to write to the queue.
  // What SNS cannot deliver (a policy or key refusal) goes to its own DLQ instead of being lost.
  const subscribed = (id: string, queue: sqs.IQueue) => {
    const topic = new sns.Topic(scope, id, { masterKey: props.topicKey, enforceSSL: true });
    topic.addSubscription(
      new SqsSubscription(queue, { rawMessageDelivery: false, deadLetterQueue: props.subscriptionDeadLetterQueue }),
    );
    return topic;
  };
  return {
    topic: subscribed('Topic', props.queue),
    highPriorityTopic: subscribed('HighPriorityTopic', props.highPriorityQueue),
  };
}
