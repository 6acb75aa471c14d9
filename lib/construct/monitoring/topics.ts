/**
 * Where the alarms notify: two topics, one per severity (paging and warning), each encrypted with
 * its own customer-managed key and TLS only, each with an optional email subscription.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { SettingsError, configuredAddressProblem } from '../../settings';

/** What one notification topic is for. */
export interface AlarmTopicKind {
  /** Construct id prefix: `AlarmTopic` (paging) or `WarningTopic`. */
  readonly id: 'AlarmTopic' | 'WarningTopic';
  /** Shown in notifications and the console. */
  readonly displayName: string;
  /** The description of its key. */
  readonly keyDescription: string;
}

/** The paging topic (ids unchanged since the first release, so deployed stacks keep it). */
export const PAGING_TOPIC: AlarmTopicKind = {
  id: 'AlarmTopic',
  displayName: 'Email pipeline alarms (paging)',
  keyDescription: 'Encrypts the email pipeline alarm topic',
};
/** The warning topic. */
export const WARNING_TOPIC: AlarmTopicKind = {
  id: 'WarningTopic',
  displayName: 'Email pipeline warnings',
  keyDescription: 'Encrypts the email pipeline warning topic',
};

/** An alarm and OK notification topic: encrypted with its own customer-managed key, TLS only. */
export function createAlarmTopic(scope: Construct, kind: AlarmTopicKind = PAGING_TOPIC): sns.Topic {
  const stack = Stack.of(scope);
  const key = new kms.Key(scope, `${kind.id}Key`, {
    description: kind.keyDescription,
    enableKeyRotation: true,
  });
  // CloudWatch publishes alarm notifications to the encrypted topic.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsUseKey',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      // Only alarms of this account, as the topic policy says.
      conditions: alarmSourceConditions(stack),
    }),
  );
  const topic = new sns.Topic(scope, kind.id, {
    displayName: kind.displayName,
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: alarmSourceConditions(stack),
    }),
  );
  return topic;
}

/** Subscribes an email address (checked first; `setting` names it in the error) to a topic. */
export function subscribeAlarmEmail(topic: sns.ITopic, alarmEmail: string, setting = 'alarmEmail'): void {
  const problem = configuredAddressProblem(alarmEmail);
  if (problem !== undefined) throw new SettingsError(setting, alarmEmail, problem);
  const subscription = topic.addSubscription(new EmailSubscription(alarmEmail));
  Validations.of(subscription).acknowledge({
    id: 'Serverless::Serverless-SNSRedrivePolicy',
    reason:
      'An alarm mail SNS cannot deliver is not lost information: the alarm keeps its state and history in ' +
      'CloudWatch, and the dashboard shows it. A DLQ of undelivered alarm mails would itself need watching.',
  });
}

/** CloudWatch alarms of the stack's account and region, as `aws:SourceAccount`/`aws:SourceArn` conditions. */
function alarmSourceConditions(stack: Stack): Record<string, Record<string, string>> {
  return {
    StringEquals: { 'aws:SourceAccount': stack.account },
    ArnLike: {
      'aws:SourceArn': stack.formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    },
  };
}
