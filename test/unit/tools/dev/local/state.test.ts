/** outputs.json as `npm start` writes it: `Teams` with the teams' topics, and no `Teams` at all without teams. */
import type { LocalResources } from '../../../../../tools/dev/local/resources';
import { localOutputs } from '../../../../../tools/dev/local/state';

const resources = {
  senderRoleName: 'SendRole',
  topicArn: 'arn:topic',
  highPriorityTopicArn: 'arn:high',
  queueUrl: 'q',
  queueArn: 'arn:q',
  highPriorityQueueUrl: 'h',
  highPriorityQueueArn: 'arn:h',
  scheduleQueueUrl: 's',
  scheduleQueueArn: 'arn:s',
  deadLetterQueueUrl: 'd',
  deadLetterQueueArn: 'arn:d',
  tableName: 't',
  ledger: {
    configurationSetName: 'c',
    bufferQueueUrl: 'b',
    bufferQueueArn: 'arn:b',
    bufferDeadLetterQueueUrl: 'bd',
    bufferDeadLetterQueueArn: 'arn:bd',
    tableName: 'l',
    deliveryStatusTopicArn: 'arn:status',
  },
} satisfies LocalResources;
const endpoints = { dynamodb: 'ddb', sns: 'sns', sqs: 'sqs', ses: 'ses', mailboxUrl: 'mail' };
const urls = { statusUrl: 'status/', cancelUrl: 'cancel/' };

test('without teams, outputs.json has no Teams', () => {
  expect(localOutputs(resources, endpoints, 'email-pipeline', urls)).not.toHaveProperty('Teams');
});

test('with teams, outputs.json names each team’s topic, and the high-priority topic only where there is one', () => {
  const teams = {
    billing: { topicArn: 'arn:billing', senders: ['billing@example.com'] },
    security: { topicArn: 'arn:security', highPriorityTopicArn: 'arn:security-high', senders: ['s@example.com'] },
  };
  expect(localOutputs({ ...resources, teams }, endpoints, 'email-pipeline', urls).Teams).toEqual({
    billing: { TopicArn: 'arn:billing' },
    security: { TopicArn: 'arn:security', HighPriorityTopicArn: 'arn:security-high' },
  });
});
