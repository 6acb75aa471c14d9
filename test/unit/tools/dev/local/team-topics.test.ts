/** outputs.json's `Teams`: each team's topic, the high-priority topic and the SES tenant of a team that has one; no senders. */
import { teamOutputs } from '../../../../../tools/dev/local/team-topics';

test('Teams names each topic, a high-priority topic only where there is one, and no senders', () => {
  expect(
    teamOutputs({
      billing: { topicArn: 'arn:billing', senders: ['billing@example.com'] },
      security: { topicArn: 'arn:security', highPriorityTopicArn: 'arn:security-high', senders: ['s@example.com'] },
    }),
  ).toEqual({
    billing: { TopicArn: 'arn:billing' },
    security: { TopicArn: 'arn:security', HighPriorityTopicArn: 'arn:security-high' },
  });
});

test('a team with an SES tenant has its TenantName (what verify asks GetTenant about); the others none', () => {
  expect(
    teamOutputs({
      billing: { topicArn: 'arn:billing', senders: ['billing@example.com'] },
      security: { topicArn: 'arn:security', senders: ['s@example.com'], tenantName: 'mail-security' },
    }),
  ).toEqual({
    billing: { TopicArn: 'arn:billing' },
    security: { TopicArn: 'arn:security', TenantName: 'mail-security' },
  });
});

test('a team with URLs of its own has its StatusUrl and, with a cancel URL, its CancelUrl, each ending in deliveries/', () => {
  expect(
    teamOutputs(
      {
        billing: { topicArn: 'arn:billing', senders: ['billing@example.com'] },
        audit: { topicArn: 'arn:audit', senders: ['audit@example.com'] },
        security: { topicArn: 'arn:security', senders: ['s@example.com'] },
      },
      {
        billing: {
          statusUrl: 'http://127.0.0.1:8010/teams/billing',
          cancelUrl: 'http://127.0.0.1:8010/teams/billing/cancel',
        },
        audit: { statusUrl: 'http://127.0.0.1:8010/teams/audit' },
      },
    ),
  ).toEqual({
    billing: {
      TopicArn: 'arn:billing',
      StatusUrl: 'http://127.0.0.1:8010/teams/billing/deliveries/',
      CancelUrl: 'http://127.0.0.1:8010/teams/billing/cancel/deliveries/',
    },
    audit: { TopicArn: 'arn:audit', StatusUrl: 'http://127.0.0.1:8010/teams/audit/deliveries/' },
    security: { TopicArn: 'arn:security' },
  });
});
