/**
 * The pipeline's resource policies, each a Deny that no IAM policy of the
 * account can open and no tag a principal could set on itself unlocks: only
 * the listed publishers may publish to the topic, and only the topic, the send
 * function and the queue's own redrive (plus the named redrive principals) may
 * send to the queues.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { SettingsError } from '../../settings';
import { onlyTheseSend } from '../shared';
import { isRole, principalArn } from './principals';

/**
 * Topic policy: the listed publishers may publish (and use the key to do
 * so); everyone else is denied, whatever their IAM policies say. Returns a
 * function that admits one more publisher later (`EmailPipeline.grantPublish`):
 * it extends the same Deny's exemptions and grants the publish.
 */
export function restrictPublishers(
  topic: sns.Topic,
  principals: readonly iam.IPrincipal[],
): (principal: iam.IPrincipal) => iam.Grant {
  if (principals.length === 0) {
    throw new SettingsError('publisherPrincipals', [], 'must name at least one publisher');
  }
  const accounts: string[] = [];
  const arns: string[] = [];
  const deny = new iam.PolicyStatement({
    sid: 'OnlyConfiguredPublishers',
    effect: iam.Effect.DENY,
    principals: [new iam.AnyPrincipal()],
    actions: ['sns:Publish'],
    resources: [topic.topicArn],
  });
  const admit = (principal: iam.IPrincipal, setting: string): iam.Grant => {
    if (principal instanceof iam.AccountPrincipal) {
      accounts.push(principal.accountId);
      deny.addCondition('StringNotEquals', { 'aws:PrincipalAccount': [...accounts] });
    } else if (principal instanceof iam.ArnPrincipal || isRole(principal)) {
      arns.push(isRole(principal) ? principal.roleArn : (principal as iam.ArnPrincipal).arn);
      deny.addCondition('ArnNotEquals', { 'aws:PrincipalArn': [...arns] });
    } else {
      throw new SettingsError(
        setting,
        principal.toString(),
        'each must be an account (AccountPrincipal, AccountRootPrincipal), a role or an ArnPrincipal',
      );
    }
    return topic.grantPublish(principal);
  };
  for (const principal of principals) admit(principal, 'publisherPrincipals');
  topic.addToResourcePolicy(deny);
  return (principal) => admit(principal, 'grantPublish');
}

/**
 * Queue policies: only the topic (and the function, re-enqueueing a retried
 * message) may send to the work queue and to the high-priority queue, only the
 * function (and the two queues' own redrive) to their DLQ, only the topic to the subscription's DLQ; the redrive
 * principals, named by ARN, are exempt. A Deny, so that no IAM policy
 * (PowerUser, a CI role) can plant a message the function would send, and no
 * tag a principal could set on itself opens it.
 */
export function restrictQueueSenders(props: {
  readonly topic: sns.ITopic;
  readonly queue: sqs.IQueue;
  /** The high-priority queue: the same rule as the work queue. */
  readonly highPriorityQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly subscriptionDeadLetterQueue: sqs.IQueue;
  /** The send function's role. */
  readonly senderRole: iam.IRole;
  /** The redrive role and `redrivePrincipals`: roles or users, by ARN. */
  readonly redrivePrincipals: readonly iam.IPrincipal[];
}): void {
  const redrivers = props.redrivePrincipals.map((principal) => principalArn(principal, 'redrivePrincipals'));
  const deny = (queue: sqs.IQueue, sid: string, allowed: Record<string, string[]>) =>
    onlyTheseSend(queue, sid, {
      ...allowed,
      'aws:PrincipalArn': [...(allowed['aws:PrincipalArn'] ?? []), ...redrivers],
    });
  // The function sends too: a retried message goes back to the work queue as a delayed copy
  // (the retry budget); it only ever re-enqueues an envelope it received from the topic.
  for (const queue of [props.queue, props.highPriorityQueue]) {
    deny(queue, 'OnlyTheTopicSends', {
      'aws:SourceArn': [props.topic.topicArn],
      'aws:PrincipalArn': [props.senderRole.roleArn],
    });
  }
  deny(props.deadLetterQueue, 'OnlyTheFunctionDeadLetters', {
    'aws:PrincipalArn': [props.senderRole.roleArn],
    'aws:SourceArn': [props.queue.queueArn, props.highPriorityQueue.queueArn],
  });
  deny(props.subscriptionDeadLetterQueue, 'OnlyTheTopicDeadLetters', { 'aws:SourceArn': [props.topic.topicArn] });
}
