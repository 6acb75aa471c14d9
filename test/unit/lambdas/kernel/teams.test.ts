/** The teams' routes as the functions read them from their environment, and the team of a topic. */
import {
  namespaceTaken,
  parseTeamRoutes,
  teamKey,
  teamOfKey,
  teamOfTopic,
  teamOfInvocation,
  teamOfQueue,
  tenantOfKey,
} from '../../../../lambdas/kernel/teams';

const ROUTES = {
  billing: {
    topicArn: 'arn:billing',
    queueUrl: 'https://sqs/pipe-t-billing',
    senders: ['billing@example.com', 'invoices@example.com'],
    rateSharePercent: 62.5,
  },
  security: { topicArn: 'arn:security', highPriorityTopicArn: 'arn:security-high', senders: ['security@example.com'] },
};

test('absent or empty: no teams', () => {
  expect(parseTeamRoutes(undefined, 'TEAMS')).toBeUndefined();
  expect(parseTeamRoutes('', 'TEAMS')).toBeUndefined();
  expect(parseTeamRoutes('{}', 'TEAMS')).toBeUndefined();
});

test('reads the routes as written', () => {
  expect(parseTeamRoutes(JSON.stringify(ROUTES), 'TEAMS')).toEqual(ROUTES);
});

test.each([
  ['not json', 'must be JSON'],
  ['[]', 'must be a JSON object'],
  [JSON.stringify({ billing: { senders: ['b@example.com'] } }), 'team billing needs a topicArn'],
  [JSON.stringify({ billing: { topicArn: 'arn:b', senders: [] } }), 'team billing needs a non-empty list of senders'],
  [JSON.stringify({ billing: { topicArn: 'arn:b', highPriorityTopicArn: '', senders: ['b@example.com'] } }), 'empty'],
  [JSON.stringify({ billing: { topicArn: 'arn:b', queueUrl: '', senders: ['b@example.com'] } }), 'empty queueUrl'],
  [
    JSON.stringify({ billing: { topicArn: 'arn:b', senders: ['b@example.com'], rateSharePercent: '50' } }),
    'rateSharePercent that is not a number from 0 to 100',
  ],
  [
    JSON.stringify({ billing: { topicArn: 'arn:b', senders: ['b@example.com'], rateSharePercent: 101 } }),
    'rateSharePercent that is not a number from 0 to 100',
  ],
])('%s is refused, naming the variable: %s', (raw, reason) => {
  expect(() => parseTeamRoutes(raw, 'TEAMS')).toThrow(/^Environment variable TEAMS/);
  expect(() => parseTeamRoutes(raw, 'TEAMS')).toThrow(reason);
});

test('the team of a topic: either of its topics; any other topic, or none, has no team', () => {
  expect(teamOfTopic(ROUTES, 'arn:billing')).toBe('billing');
  expect(teamOfTopic(ROUTES, 'arn:security-high')).toBe('security');
  expect(teamOfTopic(ROUTES, 'arn:other')).toBeUndefined();
  expect(teamOfTopic(ROUTES, undefined)).toBeUndefined();
  expect(teamOfTopic(undefined, 'arn:billing')).toBeUndefined();
});

test('a team key is <team>#<key>; a bare key takes a namespace only when it starts with a configured team and #', () => {
  expect(teamKey('billing', 'order-42')).toBe('billing#order-42');
  expect(namespaceTaken(ROUTES, 'billing#order-42')).toBe('billing');
  expect(namespaceTaken(ROUTES, 'billing-order#42')).toBeUndefined();
  expect(namespaceTaken(ROUTES, 'order-42')).toBeUndefined();
  expect(namespaceTaken(ROUTES, 'constructor#x')).toBeUndefined();
  expect(namespaceTaken(undefined, 'billing#order-42')).toBeUndefined();
});

test("the team of a key: the part before the first # when it is one of the teams' names", () => {
  const names = ['billing', 'security'];
  expect(teamOfKey(names, 'billing#order-42')).toBe('billing');
  expect(teamOfKey(names, 'security#a#b')).toBe('security');
  expect(teamOfKey(names, 'other#order-42')).toBeUndefined();
  expect(teamOfKey(names, 'order-42')).toBeUndefined();
  expect(teamOfKey(undefined, 'billing#order-42')).toBeUndefined();
});

test("a team's tenant name is read back from the variable; an empty one is refused", () => {
  const raw = JSON.stringify({ security: { topicArn: 'arn:s', senders: ['s@example.com'], tenantName: 't-security' } });
  const routes = parseTeamRoutes(raw, 'TEAMS');
  expect(routes?.security?.tenantName).toBe('t-security');
  expect(tenantOfKey(routes, 'security#k')).toBe('t-security');
  expect(tenantOfKey(routes, 'k')).toBeUndefined();
  const empty = JSON.stringify({ security: { topicArn: 'arn:s', senders: ['s@example.com'], tenantName: '' } });
  expect(() => parseTeamRoutes(empty, 'TEAMS')).toThrow('team security has an empty tenantName');
});

test('the team a function was invoked as: a team-<name> alias in its ARN; any other qualifier, or none, is none', () => {
  const fn = 'arn:aws:lambda:eu-west-1:111122223333:function:mail-status';
  expect(teamOfInvocation(`${fn}:team-billing`)).toBe('billing');
  expect(teamOfInvocation(fn)).toBeUndefined();
  expect(teamOfInvocation(`${fn}:live`)).toBeUndefined();
  expect(teamOfInvocation(`${fn}:team-Bad`)).toBeUndefined();
  expect(teamOfInvocation(undefined)).toBeUndefined();
});

test("the team of a queue: the team whose own queue it is, by the queue's name in a URL or an ARN", () => {
  const routes = parseTeamRoutes(
    JSON.stringify({
      ...ROUTES,
      billing: { ...ROUTES.billing, queueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/p-t-billing' },
    }),
    'TEAMS',
  );
  expect(routes?.billing?.queueUrl).toBe('https://sqs.eu-west-1.amazonaws.com/1/p-t-billing');
  expect(teamOfQueue(routes, 'arn:aws:sqs:eu-west-1:1:p-t-billing')).toBe('billing');
  expect(teamOfQueue(routes, 'https://sqs.eu-west-1.amazonaws.com/1/p-t-billing')).toBe('billing');
  // security has no queue of its own; the work queue is no team's.
  expect(teamOfQueue(routes, 'arn:aws:sqs:eu-west-1:1:p-work')).toBeUndefined();
  expect(teamOfQueue(routes, undefined)).toBeUndefined();
  expect(teamOfQueue(undefined, 'arn:aws:sqs:eu-west-1:1:p-t-billing')).toBeUndefined();
});
