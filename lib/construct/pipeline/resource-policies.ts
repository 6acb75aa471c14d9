/**
 * The pipeline's resource policies, each a Deny that no IAM policy of the
 * account can open and no tag a principal could set on itself unlocks: only
 * the listed publishers may publish to the topic, and only the topic, the send
 * and schedule functions and the queue's own redrive (plus the named redrive
 * principals) may send to the queues; to the schedule queue, only the two
 * functions.
 */
import { Lazy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { SettingsError } from '../../settings';
import { onlyTheseSend } from '../common/queues';
import { isRole, principalArn } from './principals';

/** How a topic's publishers are restricted: who the errors name, and the ARN exempted when nobody is listed. */
export interface PublisherRestriction {
  /** The setting or prop the errors name (publisherPrincipals, highPriorityPublisherPrincipals). */
  readonly setting: string;
  /** The method that admits one more later, which its errors name (grantPublish, grantPublishHighPriority). */
  readonly grantedBy: string;
  /** Whether at least one publisher must be given at once. */
  readonly required: boolean;
  /**
   * The one ARN the deny exempts while no publisher is listed: a principal with no sns:Publish of
   * its own (the send function's role), so that nobody may publish until one is granted.
   */
  readonly nobody: string;
}

/**
 * Topic policy: the listed publishers may publish (and use the key to do so); everyone else is
 * denied, whatever their IAM policies say. Returns a function that admits one more publisher later
 * (`EmailPipeline.grantPublish`, `grantPublishHighPriority`): the Deny's exemptions are rendered at
 * synth, so later grants count, and it grants the publish.
 */
export function restrictPublishers(
  topic: sns.Topic,
  principals: readonly iam.IPrincipal[],
  restriction: PublisherRestriction = {
    setting: 'publisherPrincipals',
    grantedBy: 'grantPublish',
    required: true,
    nobody: '',
  },
): (principal: iam.IPrincipal) => iam.Grant {
  if (restriction.required && principals.length === 0) {
    throw new SettingsError(restriction.setting, [], 'must name at least one publisher');
  }
  const accounts: string[] = [];
  const arns: string[] = [];
  const add = (principal: iam.IPrincipal, setting: string): iam.Grant => {
    if (principal instanceof iam.AccountPrincipal) accounts.push(principal.accountId);
    else if (principal instanceof iam.ArnPrincipal) arns.push(principal.arn);
    else if (isRole(principal)) arns.push(principal.roleArn);
    else {
      throw new SettingsError(
        setting,
        principal.toString(),
        'each must be an account (AccountPrincipal, AccountRootPrincipal), a role or an ArnPrincipal',
      );
    }
    return topic.grantPublish(principal);
  };
  for (const principal of principals) add(principal, restriction.setting);
  const statement = new iam.PolicyStatement({
    sid: 'OnlyConfiguredPublishers',
    effect: iam.Effect.DENY,
    principals: [new iam.AnyPrincipal()],
    actions: ['sns:Publish'],
    resources: [topic.topicArn],
  });
  // Both conditions must hold for the deny: a listed account or a listed ARN is enough to publish.
  statement.addCondition(
    'StringNotEquals',
    Lazy.any({ produce: () => (accounts.length > 0 ? { 'aws:PrincipalAccount': accounts } : undefined) }),
  );
  statement.addCondition(
    'ArnNotEquals',
    Lazy.any({
      produce: () => {
        if (arns.length > 0) return { 'aws:PrincipalArn': arns };
        return accounts.length > 0 ? undefined : { 'aws:PrincipalArn': [restriction.nobody] };
      },
    }),
  );
  topic.addToResourcePolicy(statement);
  return (principal) => add(principal, restriction.grantedBy);
}

/**
 * The high-priority topic's policy: only `principals` (and those admitted later by the returned
 * function, `grantPublishHighPriority`) may publish. None by default: while none is listed the
 * Deny exempts only `sendRole`, which no statement lets publish, so nobody publishes high priority.
 */
export function restrictHighPriorityPublishers(
  topic: sns.Topic,
  principals: readonly iam.IPrincipal[],
  sendRole: iam.IRole,
): (principal: iam.IPrincipal) => iam.Grant {
  return restrictPublishers(topic, principals, {
    setting: 'highPriorityPublisherPrincipals',
    grantedBy: 'grantPublishHighPriority',
    required: false,
    nobody: sendRole.roleArn,
  });
}

/**
 * Queue policies: only the topic (and the functions: the send function re-enqueueing a retried
 * message, the schedule function forwarding a due one) may send to the work queue, only the
 * high-priority topics (and the functions) to the high-priority queue, only a team's topic (and
 * the functions) to the team's queue, only the send and schedule
 * functions to the schedule queue (no redrive principal either: the DLQ tools redrive to the work
 * queue), only the send function (and the three queues' own redrive) to their DLQ, only the topics
 * to the subscription's DLQ; the redrive principals, named by ARN, are exempt elsewhere. A Deny, so that no IAM policy
 * (PowerUser, a CI role) can plant a message the function would send, and no
 * tag a principal could set on itself opens it.
 */
export function restrictQueueSenders(props: {
  readonly topic: sns.ITopic;
  /** Feeds the high-priority queue, the only topic that may. */
  readonly highPriorityTopic: sns.ITopic;
  readonly queue: sqs.IQueue;
  /** The high-priority queue: the same rule as the work queue. */
  readonly highPriorityQueue: sqs.IQueue;
  /** The waiting lane: the two functions only. */
  readonly scheduleQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly subscriptionDeadLetterQueue: sqs.IQueue;
  /** The send function's role. */
  readonly senderRole: iam.IRole;
  /** The schedule function's role: it forwards due copies to the lanes' queues. */
  readonly scheduleRole: iam.IRole;
  /** The redrive role and `redrivePrincipals`: roles or users, by ARN. */
  readonly redrivePrincipals: readonly iam.IPrincipal[];
  /** The teams' high-priority topics, which feed the high-priority queue. @default none */
  readonly teamHighPriorityTopics?: readonly sns.ITopic[];
  /** Each team's queue with the team's topic, its only topic. @default none */
  readonly teamQueues?: readonly { readonly queue: sqs.IQueue; readonly topic: sns.ITopic }[];
}): void {
  const redrivers = props.redrivePrincipals.map((principal) => principalArn(principal, 'redrivePrincipals'));
  const deny = (queue: sqs.IQueue, sid: string, allowed: Record<string, string[]>) =>
    onlyTheseSend(queue, sid, {
      ...allowed,
      'aws:PrincipalArn': [...(allowed['aws:PrincipalArn'] ?? []), ...redrivers],
    });
  // The function sends too: a retried message goes back to its queue as a delayed copy (the retry
  // budget); it only ever re-enqueues an envelope it received there. Each queue admits its own
  // topic only: a message is high priority because its publisher may publish to the high-priority topic.
  // A team's topics are the pipeline's too: its topic admitted to its own queue only, its
  // high-priority topic to the high-priority queue.
  const teamHigh = props.teamHighPriorityTopics ?? [];
  const teamQueues = props.teamQueues ?? [];
  for (const [queue, topics] of [
    [props.queue, [props.topic]],
    [props.highPriorityQueue, [props.highPriorityTopic, ...teamHigh]],
    ...teamQueues.map((team) => [team.queue, [team.topic]] as const),
  ] as const) {
    deny(queue, 'OnlyTheTopicSends', {
      'aws:SourceArn': topics.map((topic) => topic.topicArn),
      'aws:PrincipalArn': [props.senderRole.roleArn, props.scheduleRole.roleArn],
    });
  }
  onlyTheseSend(props.scheduleQueue, 'OnlyThePipelineFunctionsSchedule', {
    'aws:PrincipalArn': [props.senderRole.roleArn, props.scheduleRole.roleArn],
  });
  deny(props.deadLetterQueue, 'OnlyTheFunctionDeadLetters', {
    'aws:PrincipalArn': [props.senderRole.roleArn],
    'aws:SourceArn': [props.queue, props.highPriorityQueue, props.scheduleQueue, ...teamQueues.map((t) => t.queue)].map(
      (queue) => queue.queueArn,
    ),
  });
  deny(props.subscriptionDeadLetterQueue, 'OnlyTheTopicDeadLetters', {
    'aws:SourceArn': [props.topic, props.highPriorityTopic, ...teamQueues.map((t) => t.topic), ...teamHigh].map(
      (t) => t.topicArn,
    ),
  });
}
