/**
 * The teams' topics and queues in the template: a topic per team feeding the team's own queue (its
 * own event source mapping, its share of the concurrency), and a high-priority topic for a team with
 * high priority feeding the high-priority queue, each admitted by that queue's policy only,
 * publish open to the team's publishers only, the send and ledger functions told the teams, the endpoints
 * and outputs naming them; and nothing of it without teams.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { LEDGER_ENV } from '../../../../../lambdas/kernel/environment';
import { TEAMS_ENV } from '../../../../../lambdas/kernel/teams';
import { EmailPipeline } from '../../../../../lib/construct/email-pipeline';
import { BASE_PROPS, synthDefault, synthesize, userStack } from '../../../helpers';

const TEAMS = {
  billing: {
    senders: ['billing@example.com', 'invoices@example.com'],
    publishers: ['arn:aws:iam::111122223333:role/billing'],
    rateSharePercent: 50,
  },
  security: {
    senders: ['security@example.com'],
    publishers: ['arn:aws:iam::111122223333:role/security'],
    highPriority: true,
    rateSharePercent: 50,
  },
};

const withTeams = synthesize({ teams: TEAMS });
const { template, stack } = withTeams;
const pipeline = stack.pipeline;
const logicalId = (topic: { node: { defaultChild?: unknown } }) => stack.getLogicalId(topic.node.defaultChild as never);

const billingTopic = logicalId(pipeline.teamTopics.billing!.topic);
const securityTopic = logicalId(pipeline.teamTopics.security!.topic);
const securityHigh = logicalId(pipeline.teamTopics.security!.highPriorityTopic!);
const billingQueue = logicalId(pipeline.teamQueues.billing!);
const securityQueue = logicalId(pipeline.teamQueues.security!);

test('without teams (or with none listed) the template is exactly as before', () => {
  const none = synthDefault().template.toJSON();
  expect(synthesize({ teams: {} }).template.toJSON()).toEqual(none);
  expect(JSON.stringify(none)).not.toContain(TEAMS_ENV);
  expect(synthDefault().stack.pipeline.teamTopics).toEqual({});
});

test('a topic per team, and a high-priority topic for the team with high priority only', () => {
  expect(Object.keys(pipeline.teamTopics).sort()).toEqual(['billing', 'security']);
  expect(pipeline.teamTopics.billing?.highPriorityTopic).toBeUndefined();
  expect(pipeline.teamTopics.security?.highPriorityTopic).toBeDefined();
  // Three more than without teams: billing's, security's and security's high-priority topic.
  const before = Object.keys(synthDefault().template.findResources('AWS::SNS::Topic')).length;
  template.resourceCountIs('AWS::SNS::Topic', before + 3);
});

test("each team's topic feeds the team's own queue, its high-priority topic the high-priority queue, with the SNS envelope", () => {
  const subscriptions = template.findResources('AWS::SNS::Subscription');
  const feeds = (topic: string) =>
    Object.values(subscriptions)
      .filter((s) => JSON.stringify(s.Properties.TopicArn) === JSON.stringify({ Ref: topic }))
      .map((s) => ({ endpoint: JSON.stringify(s.Properties.Endpoint), raw: s.Properties.RawMessageDelivery }));
  const queueArn = (id: string) => JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] });

  expect(feeds(billingTopic)).toEqual([{ endpoint: queueArn(billingQueue), raw: false }]);
  expect(feeds(securityTopic)).toEqual([{ endpoint: queueArn(securityQueue), raw: false }]);
  expect(feeds(securityHigh)).toEqual([{ endpoint: queueArn(withTeams.ids.highPriorityQueue), raw: false }]);
});

test("each queue's policy admits its own lane's team topics, and no other lane's", () => {
  const sources = (queue: string): string => {
    const policies = template.findResources('AWS::SQS::QueuePolicy');
    const mine = Object.values(policies).filter((p) => JSON.stringify(p.Properties.Queues).includes(`"${queue}"`));
    const deny = mine
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>)
      .find((s) => s.Sid === 'OnlyTheTopicSends');
    return JSON.stringify(deny);
  };
  const work = sources(withTeams.ids.queue);
  expect(work).not.toContain(billingTopic);
  expect(work).not.toContain(securityTopic);
  expect(work).not.toContain(securityHigh);
  const billing = sources(billingQueue);
  expect(billing).toContain(billingTopic);
  expect(billing).not.toContain(securityTopic);
  expect(billing).not.toContain(securityHigh);
  const security = sources(securityQueue);
  expect(security).toContain(securityTopic);
  expect(security).not.toContain(billingTopic);
  const high = sources(withTeams.ids.highPriorityQueue);
  expect(high).toContain(securityHigh);
  expect(high).not.toContain(billingTopic);
  expect(high).not.toContain(securityTopic);
});

test("each team's queue is the send function's event source, with the team's share of maxConcurrency", () => {
  const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
  const of = (queue: string) =>
    mappings.filter(
      (m) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify({ 'Fn::GetAtt': [queue, 'Arn'] }),
    );
  // maxConcurrency 10 (the default), shares 50 and 50.
  for (const queue of [billingQueue, securityQueue]) {
    expect(of(queue)).toHaveLength(1);
    expect(of(queue)[0]?.Properties).toMatchObject({
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  }
  const skewed = synthesize({
    maxConcurrency: 20,
    teams: {
      ...TEAMS,
      billing: { ...TEAMS.billing, rateSharePercent: 80 },
      security: { ...TEAMS.security, rateSharePercent: 5 },
    },
  });
  const concurrency = (queue: unknown) =>
    Object.values(skewed.template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (m) =>
        JSON.stringify(m.Properties.EventSourceArn) ===
        JSON.stringify({
          'Fn::GetAtt': [
            skewed.stack.getLogicalId((queue as { node: { defaultChild: never } }).node.defaultChild),
            'Arn',
          ],
        }),
    )?.Properties.ScalingConfig.MaximumConcurrency;
  expect(concurrency(skewed.stack.pipeline.teamQueues.billing)).toBe(16);
  // 5 % of 20 is 1: Lambda's least for a mapping is 2.
  expect(concurrency(skewed.stack.pipeline.teamQueues.security)).toBe(2);
});

test("a team's queue is a work queue: the pipeline's DLQ (which admits it), its key; retries and due copies may go back", () => {
  const queues = template.findResources('AWS::SQS::Queue');
  for (const queue of [billingQueue, securityQueue]) {
    expect(JSON.stringify(queues[queue]?.Properties.RedrivePolicy)).toContain(withTeams.ids.deadLetterQueue);
    expect(queues[queue]?.Properties.KmsMasterKeyId).toBeDefined();
  }
  const allow = JSON.stringify(queues[withTeams.ids.deadLetterQueue]?.Properties.RedriveAllowPolicy);
  expect(allow).toContain('-t-billing');
  expect(allow).toContain('-t-security');
  const statements = (role: string) =>
    JSON.stringify(
      Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
        JSON.stringify(p.Properties.Roles).includes(role),
      ),
    );
  for (const role of ['SendFunctionRole', 'ScheduleFunctionRole']) {
    expect(statements(role)).toContain(billingQueue);
    expect(statements(role)).toContain(securityQueue);
  }
});

test("a team's topics admit its own publishers only", () => {
  const policyOf = (topic: string): string => {
    const policies = template.findResources('AWS::SNS::TopicPolicy');
    return JSON.stringify(
      Object.values(policies).find((p) => JSON.stringify(p.Properties.Topics) === JSON.stringify([{ Ref: topic }])),
    );
  };
  expect(policyOf(billingTopic)).toContain('role/billing');
  expect(policyOf(billingTopic)).not.toContain('role/security');
  expect(policyOf(securityHigh)).toContain('role/security');
  expect(policyOf(securityHigh)).not.toContain('role/billing');
});

test('a team with no publishers: nobody may publish (the Deny exempts only the send role, which may not publish)', () => {
  const { stack: lone } = synthesize({ teams: { billing: { senders: ['billing@example.com'] } } });
  const topic = lone.getLogicalId(lone.pipeline.teamTopics.billing!.topic.node.defaultChild as never);
  const policy = Object.values(Template.fromStack(lone).findResources('AWS::SNS::TopicPolicy')).find(
    (p) => JSON.stringify(p.Properties.Topics) === JSON.stringify([{ Ref: topic }]),
  );
  const statements = policy?.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>;
  expect(statements.filter((s) => s.Effect === 'Allow')).toEqual([]);
  expect(JSON.stringify(statements)).toContain('SendFunctionRole');
});

test('the send and schedule functions are told each team: its topics, queue, senders and share of the rate', () => {
  const fn = Object.values(template.findResources('AWS::Lambda::Function')).find(
    (f) => f.Properties.Environment?.Variables?.[TEAMS_ENV] !== undefined,
  );
  const text = JSON.stringify(fn?.Properties.Environment.Variables[TEAMS_ENV]);
  for (const id of [billingTopic, securityTopic, securityHigh, billingQueue, securityQueue]) expect(text).toContain(id);
  expect(text).toContain('invoices@example.com');
  // Each team's share: its lane of the rate lease (a JSON string inside an Fn::Join).
  expect(text.match(/\\"rateSharePercent\\":50/g)).toHaveLength(2);
  const schedule = Object.values(template.findResources('AWS::Lambda::Function')).find((f) =>
    JSON.stringify(f.Properties.Role).includes('ScheduleFunctionRole'),
  );
  expect(JSON.stringify(schedule?.Properties.Environment.Variables[TEAMS_ENV])).toContain(billingQueue);
});

test("the ledger function is told the teams' names (a status change names its key's team); without teams, nothing", () => {
  const ledgerFunctions = (t: Template) =>
    Object.values(t.findResources('AWS::Lambda::Function')).filter(
      (f) => f.Properties.Environment?.Variables?.[LEDGER_ENV.deliveryStatusTopicArn] !== undefined,
    );
  const [ledger] = ledgerFunctions(template);
  expect(ledger?.Properties.Environment.Variables[LEDGER_ENV.teamNames]).toBe('billing,security');
  const [plain] = ledgerFunctions(synthDefault().template);
  expect(plain?.Properties.Environment.Variables).not.toHaveProperty(LEDGER_ENV.teamNames);
});

test('an output per team topic, and the Endpoints output holds Teams', () => {
  const outputs = template.findOutputs('*');
  const byValue = (id: string) =>
    Object.entries(outputs).filter(([, o]) => JSON.stringify(o.Value) === JSON.stringify({ Ref: id }));
  expect(byValue(billingTopic).some(([, o]) => String(o.Description).includes('Team billing'))).toBe(true);
  expect(byValue(securityHigh).some(([, o]) => String(o.Description).includes('Team security'))).toBe(true);

  const endpoints = Object.values(outputs).find((o) => JSON.stringify(o.Value).includes('emailPipeline'));
  const text = JSON.stringify(endpoints?.Value);
  expect(text).toContain('Teams');
  expect(text).toMatch(/billing.*TopicArn.*security.*TopicArn.*HighPriorityTopicArn/);
  expect(text.match(/HighPriorityTopicArn/g)?.length).toBe(2); // the pipeline's own, and security's
});

test("the subscription DLQ admits the teams' topics too", () => {
  template.hasResourceProperties('AWS::SQS::QueuePolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({
          Sid: 'OnlyTheTopicDeadLetters',
          Condition: Match.objectLike({
            ArnNotEquals: Match.objectLike({ 'aws:SourceArn': Match.arrayWith([{ Ref: securityHigh }]) }),
          }),
        }),
      ]),
    },
  });
});

test('a publisher that is not a principal is refused, naming the team field', () => {
  const { stack: user } = userStack();
  expect(
    () =>
      new EmailPipeline(user, 'Mail', {
        ...BASE_PROPS,
        teams: { billing: { senders: ['billing@example.com'], publishers: ['billing-service'] } },
      }),
  ).toThrow(/teams\.billing\.publishers\[0\]/);
});
