/**
 * The high-priority lane on the template: priority by permission. A high-priority topic of its own
 * (its own publisher list) is the only source of the high-priority queue; no subscription filters on
 * an attribute a publisher may set, and each queue has one subscription, so no message is queued
 * twice. The lane's queue is like the work queue, with its own event source mapping without a
 * batching window, and the send function's environment names it.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import { ENV } from '../../../../../lambdas/kernel/environment';
import { arnOf, resource, synthDefault, synthesize, type Synthesized } from '../../../helpers';

const subscriptionsTo = (logicalId: string, s: Synthesized = synthDefault()) =>
  Object.values(s.template.findResources('AWS::SNS::Subscription'))
    .filter((r) => JSON.stringify(r.Properties.Endpoint) === JSON.stringify(arnOf(logicalId)))
    .map((r) => r.Properties as Record<string, unknown>);

const subscriptionTo = (logicalId: string) => {
  const found = subscriptionsTo(logicalId);
  expect(found).toHaveLength(1);
  return found[0]!;
};

type Statement = Record<string, any>;

/** The statements of a topic's policy. */
function topicPolicy(s: Synthesized, topicId: string): Statement[] {
  const policies = Object.values(s.template.findResources('AWS::SNS::TopicPolicy')).filter((p) =>
    JSON.stringify(p.Properties.Topics).includes(`"${topicId}"`),
  );
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
}

/**
 * Whether the topic policy denies sns:Publish to a caller (its aws:PrincipalArn and
 * aws:PrincipalAccount, as rendered): a Deny applies when all its conditions match, and the
 * negated operators match when no value equals.
 */
function publishIsDenied(statements: Statement[], caller: { arn: unknown; account: unknown }): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return statements.some(
    (st) =>
      st.Effect === 'Deny' &&
      ([] as string[]).concat(st.Action).includes('sns:Publish') &&
      st.Condition?.Bool === undefined &&
      Object.entries((st.Condition ?? {}) as Record<string, Record<string, unknown>>).every(([op, keys]) =>
        Object.entries(keys).every(([key, expected]) => {
          const value = key === 'aws:PrincipalArn' ? caller.arn : caller.account;
          const equal = ([] as unknown[]).concat(expected).some((v) => same(v, value));
          if (op === 'ArnNotEquals' || op === 'StringNotEquals') return !equal;
          throw new Error(`operator ${op} is not modelled by this test`);
        }),
      ),
  );
}

const ACCOUNT = { Ref: 'AWS::AccountId' };
/** A role of the deploying account, allowed to publish to the topic (the default: the account). */
const accountRole = { arn: 'arn:aws:iam::123456789012:role/orders', account: ACCOUNT };

test('the high-priority queue is subscribed to the high-priority topic, and to nothing else; no filter, envelope kept', () => {
  const { ids } = synthDefault();
  const high = subscriptionTo(ids.highPriorityQueue);
  expect(high.TopicArn).toEqual({ Ref: ids.highPriorityTopic });
  expect(high.FilterPolicy).toBeUndefined();
  expect(high.RawMessageDelivery).not.toBe(true);
  expect(high.RedrivePolicy).toEqual(subscriptionTo(ids.queue).RedrivePolicy);
});

test('the work queue is subscribed to the topic only, without a filter: a message is queued once, in one lane', () => {
  const { ids } = synthDefault();
  const work = subscriptionTo(ids.queue);
  expect(work.TopicArn).toEqual({ Ref: ids.topic });
  expect(work.FilterPolicy).toBeUndefined();
});

test('no subscription of the pipeline filters on an attribute: no routing by what a publisher writes', () => {
  const { template } = synthDefault();
  const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription'));
  expect(subscriptions.length).toBeGreaterThanOrEqual(2);
  for (const subscription of subscriptions) {
    expect(subscription.Properties.FilterPolicy).toBeUndefined();
    expect(JSON.stringify(subscription.Properties)).not.toContain('priority');
  }
});

test('the high-priority topic is encrypted with the topic key and takes TLS only', () => {
  const { template, ids } = synthDefault();
  expect(resource(template, ids.highPriorityTopic).Properties.KmsMasterKeyId).toEqual(arnOf(ids.topicKey));
  expect(JSON.stringify(topicPolicy(synthDefault(), ids.highPriorityTopic))).toContain('aws:SecureTransport');
});

test('by default nobody may publish high priority: the publishers of the topic are denied there', () => {
  const s = synthDefault();
  expect(publishIsDenied(topicPolicy(s, s.ids.topic), accountRole)).toBe(false);
  expect(publishIsDenied(topicPolicy(s, s.ids.highPriorityTopic), accountRole)).toBe(true);
  // The one ARN exempted meanwhile is the send function's role, which no statement lets publish.
  const sendRole = { arn: arnOf(s.ids.role), account: ACCOUNT };
  expect(publishIsDenied(topicPolicy(s, s.ids.highPriorityTopic), sendRole)).toBe(false);
  const grants = Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap((p) =>
    (p.Properties.PolicyDocument.Statement as Statement[]).filter(
      (st) =>
        JSON.stringify(st.Action).includes('sns:Publish') &&
        JSON.stringify(st.Resource).includes(s.ids.highPriorityTopic),
    ),
  );
  expect(grants).toEqual([]);
});

test('grantPublishHighPriority and highPriorityPublisherPrincipals list who may; others, a publisher of the topic too, are denied', () => {
  let urgentArn: unknown;
  const s = synthesize(
    { highPriorityPublisherPrincipals: [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/alerts')] },
    (stack) => {
      const urgent = new iam.Role(stack, 'Urgent', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantPublishHighPriority(urgent);
      urgentArn = stack.resolve(urgent.roleArn);
    },
  );
  const high = topicPolicy(s, s.ids.highPriorityTopic);
  expect(publishIsDenied(high, { arn: urgentArn, account: ACCOUNT })).toBe(false);
  expect(publishIsDenied(high, { arn: 'arn:aws:iam::123456789012:role/alerts', account: ACCOUNT })).toBe(false);
  expect(publishIsDenied(high, accountRole)).toBe(true);
  expect(publishIsDenied(high, { arn: 'arn:aws:iam::210987654321:role/x', account: '210987654321' })).toBe(true);
  // The granted role may publish there (and use the key), and only there.
  const urgentPolicies = Object.values(s.template.findResources('AWS::IAM::Policy')).filter((p) =>
    JSON.stringify(p.Properties.Roles).includes('Urgent'),
  );
  const statements = urgentPolicies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
  expect(statements.filter((st) => st.Action === 'sns:Publish').map((st) => st.Resource)).toEqual([
    { Ref: s.ids.highPriorityTopic },
  ]);
});

test('a high-priority publisher must be an account, a role or an ArnPrincipal', () => {
  expect(() =>
    synthesize({ highPriorityPublisherPrincipals: [new iam.ServicePrincipal('lambda.amazonaws.com')] }),
  ).toThrow(/highPriorityPublisherPrincipals/);
});

const mappingOf = (logicalId: string, s = synthDefault()) => {
  const found = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
    (r) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify(arnOf(logicalId)),
  );
  expect(found).toHaveLength(1);
  return found[0]!.Properties as Record<string, any>;
};

test('the high-priority queue has its own mapping: no batching window, batch item failures reported', () => {
  const { ids } = synthDefault();
  const high = mappingOf(ids.highPriorityQueue);
  expect(high.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
  expect(high.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  expect(high.ScalingConfig).toEqual({ MaximumConcurrency: 10 });
  expect(high.BatchSize).toBe(10);
  expect(mappingOf(ids.queue).MaximumBatchingWindowInSeconds).toBe(1);
});

test('without a batching window its batch holds at most 10, whatever batchSize the work queue has', () => {
  const s = synthesize({ batchSize: 50, maxBatchingWindowSeconds: 2 });
  expect(mappingOf(s.ids.highPriorityQueue, s).BatchSize).toBe(10);
  expect(mappingOf(s.ids.queue, s).BatchSize).toBe(50);
});

test('the high-priority queue is the work queue in all but its name: retention, visibility, key and DLQ', () => {
  const { template, ids } = synthDefault();
  const { QueueName: normalName, ...normal } = resource(template, ids.queue).Properties;
  const { QueueName: highName, ...high } = resource(template, ids.highPriorityQueue).Properties;
  expect(high).toEqual(normal);
  expect(String(highName)).toMatch(/-high$/);
  expect(String(normalName)).toMatch(/-work$/);
});

test("the send function's environment names the high-priority queue, its topic and the reserve", () => {
  const { template, ids } = synthDefault();
  const vars = resource(template, ids.function).Properties.Environment.Variables;
  expect(vars[ENV.highPriorityQueueUrl]).toEqual({ Ref: ids.highPriorityQueue });
  expect(vars[ENV.highPriorityTopicArn]).toEqual({ Ref: ids.highPriorityTopic });
  expect(vars[ENV.highPriorityRateShare]).toBe('20');
});
