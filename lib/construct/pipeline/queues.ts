/**
 * The pipeline's queues and their key: the work queue, the high-priority
 * queue and each team's queue (their names fixed at synth), the schedule queue
 * where mail not yet due waits off them, the dead-letter queue (shared) only they may redrive
 * into, and the DLQ of the topic's subscriptions, all encrypted with one
 * customer-managed key.
 *
 * The schedule queue dead-letters into the same DLQ: a copy lands there only
 * when the schedule function failed to move it maxReceiveCount times, and what
 * the DLQ tools do with any dead letter (redrive it to the work queue, where
 * the send function decides again) is right for it too; the DLQ's alarms and
 * `verify` already watch that queue.
 */
import { Duration, Names, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../../settings';
import { rotatingKey } from '../common/keys';
import { DLQ_RETENTION, deadLetterQueueFor } from '../common/queues';
import { SCHEDULE_FUNCTION } from '../handler-env';

/** What {@link buildQueues} made. */
export interface PipelineQueues {
  /** Encrypts the three queues (its policy names the topic once the topic subscribes). */
  readonly queueKey: kms.Key;
  /** Permanent failures (sent by the handler) and messages past maxReceiveCount. */
  readonly deadLetterQueue: sqs.Queue;
  /** The work queue: the topic's envelopes, consumed by the send function. */
  readonly queue: sqs.Queue;
  /** The high-priority queue: the envelopes with `priority = high`, its own event source mapping. */
  readonly highPriorityQueue: sqs.Queue;
  /** Deliveries SNS could not make to the work queue (the subscription's redrive policy). */
  readonly subscriptionDeadLetterQueue: sqs.Queue;
  /** Mail not yet due, waiting for its `sendAt` (the schedule function's source). */
  readonly scheduleQueue: sqs.Queue;
  /** Each team's own queue (its topic's), by team name: as the work queue, empty without teams. */
  readonly teamQueues: Readonly<Record<string, sqs.Queue>>;
}

/** The key, the DLQ, the work queue and the subscription's DLQ, in `scope` (the pipeline). */
export function buildQueues(
  scope: Construct,
  props: { readonly settings: ResolvedSettings; readonly removalPolicy: RemovalPolicy },
): PipelineQueues {
  const teamNames = Object.keys(props.settings.teams ?? {});
  const { settings } = props;
  const queueKey = rotatingKey(
    scope,
    'QueueKey',
    'Encrypts the email pipeline queue and dead-letter queue',
    props.removalPolicy,
  );

  // The work queue's name is fixed here (not generated) so that the DLQ's
  // RedriveAllowPolicy can name it without a reference cycle.
  const baseName = Names.uniqueResourceName(scope, { maxLength: 74, separator: '-' });
  const queueName = baseName + '-work';
  const highPriorityQueueName = baseName + '-high';
  const scheduleQueueName = baseName + '-schedule';
  const teamQueueNames = Object.fromEntries(teamNames.map((team) => [team, teamQueueName(scope, team)]));
  // Only the work queues (the lanes' and the teams') and the schedule queue may use this DLQ.
  const deadLetterQueue = deadLetterQueueFor(scope, 'DeadLetterQueue', queueKey, [
    queueName,
    highPriorityQueueName,
    scheduleQueueName,
    ...Object.values(teamQueueNames),
  ]);

  // Both lanes' queues alike: same retention, visibility, redrive and key (dedupe, retries and the DLQ work the same).
  const workQueue = (id: string, name: string) =>
    new sqs.Queue(scope, id, {
      queueName: name,
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(settings.retentionPeriodSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: queueKey,
      enforceSSL: true,
    });
  const queue = workQueue('Queue', queueName);
  const highPriorityQueue = workQueue('HighPriorityQueue', highPriorityQueueName);
  // A team's queue: its burst waits there, not in front of other teams' mail (send-function.ts).
  const teamQueues = Object.fromEntries(
    Object.entries(teamQueueNames).map(([team, name]) => [team, workQueue(`TeamQueue-${team}`, name)]),
  );
  // The waiting lane: the same retention, key and DLQ; its visibility is the schedule function's.
  const scheduleQueue = new sqs.Queue(scope, 'ScheduleQueue', {
    queueName: scheduleQueueName,
    visibilityTimeout: Duration.seconds(SCHEDULE_FUNCTION.timeoutSeconds * 6),
    retentionPeriod: Duration.seconds(settings.retentionPeriodSeconds),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: queueKey,
    enforceSSL: true,
  });

  const subscriptionDeadLetterQueue = new sqs.Queue(scope, 'SubscriptionDeadLetterQueue', {
    retentionPeriod: DLQ_RETENTION,
    encryption: sqs.QueueEncryption.KMS,
    encryptionMasterKey: queueKey,
    enforceSSL: true,
  });
  Validations.of(subscriptionDeadLetterQueue).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SQS3',
    reason:
      "This queue is the SNS subscription's dead-letter queue (its redrive policy names it); cdk-nag recognises only SQS " +
      'redrive policies as DLQ use, and a DLQ of a DLQ would only move the same messages once more.',
  });

  return {
    queueKey,
    deadLetterQueue,
    queue,
    highPriorityQueue,
    subscriptionDeadLetterQueue,
    scheduleQueue,
    teamQueues,
  };
}

/**
 * A team's queue name, `<pipeline>-t-<team>`: fixed at synth (the DLQ's RedriveAllowPolicy names
 * it) and within SQS's 80 characters, the pipeline's part shortened for a long team name.
 */
export function teamQueueName(scope: Construct, team: string): string {
  const suffix = `-t-${team}`;
  return Names.uniqueResourceName(scope, { maxLength: 80 - suffix.length, separator: '-' }) + suffix;
}
