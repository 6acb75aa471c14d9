/**
 * The ledger's resource policies, each a Deny with no exemption: only SES's
 * events rule may send to the buffer (and, with the buffer's own redrive, to
 * its DLQ), and only the ledger function may publish status changes.
 */
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { onlyTheseSend } from '../common/queues';

/**
 * Queue policies of the buffer and its DLQ: only SES's events rule (EventBridge delivering SES's
 * events) may send to the buffer, and only that rule (what it could not deliver) and the buffer's
 * own redrive to its DLQ. A Deny with no exemption, not even for operators: whatever reaches the
 * buffer, the ledger records as SES's word, and that decides whether an email is sent again.
 */
export function restrictBufferSenders(props: {
  readonly rule: events.IRule;
  readonly bufferQueue: sqs.IQueue;
  readonly bufferDeadLetterQueue: sqs.IQueue;
}): void {
  onlyTheseSend(props.bufferQueue, 'OnlyTheSesEventsRuleSends', { 'aws:SourceArn': [props.rule.ruleArn] });
  onlyTheseSend(props.bufferDeadLetterQueue, 'OnlyTheSesEventsRuleDeadLetters', {
    'aws:SourceArn': [props.rule.ruleArn, props.bufferQueue.queueArn],
  });
}

/** Topic policy: only the ledger function speaks on the status topic, so a subscriber can trust what it reads. */
export function restrictStatusPublishers(deliveryStatusTopic: sns.ITopic, ledgerFunction: lambda.IFunction): void {
  deliveryStatusTopic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'OnlyTheLedgerPublishes',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sns:Publish'],
      resources: [deliveryStatusTopic.topicArn],
      conditions: { ArnNotEquals: { 'aws:PrincipalArn': ledgerFunction.role!.roleArn } },
    }),
  );
}
