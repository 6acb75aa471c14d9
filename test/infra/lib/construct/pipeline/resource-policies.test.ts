import * as iam from 'aws-cdk-lib/aws-iam';
import { CfnResource, Stack } from 'aws-cdk-lib';
import { principalsFromStrings } from '../../../../../lib/construct/email-pipeline';
import { SettingsError, settingsFromContext, splitContextSettings } from '../../../../../lib/settings';
import { arnOf, resource, synthDefault, synthesize, Synthesized } from '../../../helpers';

type Statement = Record<string, any>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Statements of the queue policy of one queue. */
function queuePolicy(s: Synthesized, logicalId: string): Statement[] {
  const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')).filter((p) =>
    (p.Properties.Queues as Array<{ Ref: string }>).some((r) => r.Ref === logicalId),
  );
  expect(policies).toHaveLength(1);
  return policies[0].Properties.PolicyDocument.Statement;
}

/** What IAM knows of a request: condition keys and their values (CloudFormation values, compared as JSON). */
type RequestContext = Readonly<Record<string, unknown>>;

/**
 * Whether one condition operator matches, as IAM evaluates it: the negated
 * operators (ArnNotEquals, StringNotEquals) match when the key is absent.
 */
function operatorMatches(operator: string, conditions: Record<string, unknown>, request: RequestContext): boolean {
  return Object.entries(conditions).every(([key, expected]) => {
    const values = ([] as unknown[]).concat(expected);
    const present = key in request;
    const equal = present && values.some((v) => same(v, request[key]));
    switch (operator) {
      case 'ArnNotEquals':
      case 'StringNotEquals':
        return !equal;
      case 'ArnEquals':
      case 'StringEquals':
        return equal;
      default:
        throw new Error(`operator ${operator} is not modelled by this test`);
    }
  });
}

/** True when a Deny statement of the policy applies to sqs:SendMessage with this request context. */
function sendIsDenied(statements: Statement[], request: RequestContext): boolean {
  return statements.some(
    (s) =>
      s.Effect === 'Deny' &&
      ([] as string[]).concat(s.Action).includes('sqs:SendMessage') &&
      s.Condition?.Bool === undefined &&
      Object.entries(s.Condition ?? {}).every(([op, c]) => operatorMatches(op, c as Record<string, unknown>, request)),
  );
}

/** The request SNS makes when the topic delivers. */
const fromTopic = (s: Synthesized) => ({ 'aws:SourceArn': { Ref: s.ids.topic } });
/** A principal of the account with sqs:SendMessage (PowerUser, a CI role), no tag. */
const someRole = { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/ci' };
/**
 * A principal that tagged itself as an operator (iam:TagRole or sts:TagSession): the tag the
 * queues once trusted. No tag opens them now.
 */
const taggedOperator = {
  'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/ops',
  'aws:PrincipalTag/email-pipeline-redrive': 'true',
};
/** Another account's role: an outsider. */
const outsider = {
  'aws:PrincipalArn': 'arn:aws:iam::210987654321:role/redrive',
  'aws:PrincipalAccount': '210987654321',
};
/** The redrive role the construct creates, as its sessions are known in aws:PrincipalArn (the role's ARN). */
const redriveRole = (s: Synthesized) => ({
  'aws:PrincipalArn': arnOf(s.stack.getLogicalId(s.stack.pipeline.redriveRole.node.defaultChild as CfnResource)),
});
/** The three queues the pipeline's topic and function feed. */
const pipelineQueues = (s: Synthesized): string[] => [
  s.ids.queue,
  s.ids.deadLetterQueue,
  s.stack.getLogicalId(s.stack.pipeline.subscriptionDeadLetterQueue.node.defaultChild as CfnResource),
];

describe('work queue policy: only the topic sends', () => {
  test('SNS delivering from the pipeline topic is not denied', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), fromTopic(s))).toBe(false);
  });

  test('SNS delivering from another topic is denied', () => {
    const s = synthDefault();
    const other = { 'aws:SourceArn': 'arn:aws:sns:eu-west-1:123456789012:other' };
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), other)).toBe(true);
  });

  test("the function's own role may send: a retried message goes back as a delayed copy", () => {
    const s = synthDefault();
    const fromFunction = { 'aws:PrincipalArn': arnOf(s.ids.role) };
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), fromFunction)).toBe(false);
  });

  test('a principal of the account sending straight to the queue is denied, whatever its IAM policies', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), someRole)).toBe(true);
  });

  test('the redrive role the construct creates may redrive into it', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), redriveRole(s))).toBe(false);
  });

  test('a principal that tagged itself email-pipeline-redrive=true is denied: no tag opens it', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), taggedOperator)).toBe(true);
  });

  test("an outsider's principal is denied, even one named like the redrive role", () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), outsider)).toBe(true);
  });

  test('with redrivePrincipals, the named role may redrive too; the redrive role still may', () => {
    const s = synthesize({ redrivePrincipals: [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/redrive')] });
    const statements = queuePolicy(s, s.ids.queue);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/redrive' })).toBe(false);
    expect(sendIsDenied(statements, redriveRole(s))).toBe(false);
    expect(sendIsDenied(statements, taggedOperator)).toBe(true);
    expect(sendIsDenied(statements, someRole)).toBe(true);
    expect(sendIsDenied(statements, fromTopic(s))).toBe(false);
  });

  test('a role given as an object is exempt by its ARN (a path included), which its sessions carry', () => {
    const ops = iam.Role.fromRoleArn(new Stack(), 'Ops', 'arn:aws:iam::123456789012:role/path/ops');
    const s = synthesize({ redrivePrincipals: [ops] });
    const statements = queuePolicy(s, s.ids.queue);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/path/ops' })).toBe(false);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/ops' })).toBe(true);
  });

  test('a redrive principal that is not a role or user by ARN is refused: services, accounts, sessions', () => {
    for (const principal of [
      new iam.ServicePrincipal('sqs.amazonaws.com'),
      new iam.AccountPrincipal('123456789012'),
      new iam.AccountRootPrincipal(),
      new iam.ArnPrincipal('arn:aws:iam::123456789012:root'),
      new iam.ArnPrincipal('arn:aws:sts::123456789012:assumed-role/ops/alice'),
    ]) {
      expect(() => synthesize({ redrivePrincipals: [principal] })).toThrow(SettingsError);
    }
  });
});

/** The logical id of a construct's CloudFormation resource. */
const id = (c: { node: { defaultChild?: unknown } }, s?: Synthesized): string =>
  (s ?? synthDefault()).stack.getLogicalId(c.node.defaultChild as CfnResource);

describe('schedule queue policy: only the pipeline’s two functions send', () => {
  const scheduleQueue = (s: Synthesized) => queuePolicy(s, id(s.stack.pipeline.scheduleQueue, s));
  const scheduleRole = (s: Synthesized) => ({
    'aws:PrincipalArn': arnOf(id(s.stack.pipeline.scheduleFunction.role!, s)),
  });

  test('the send function (a message not yet due) and the schedule function (its next hop) may send', () => {
    const s = synthDefault();
    expect(sendIsDenied(scheduleQueue(s), { 'aws:PrincipalArn': arnOf(s.ids.role) })).toBe(false);
    expect(sendIsDenied(scheduleQueue(s), scheduleRole(s))).toBe(false);
  });

  test('an outsider, a principal of the account, a self-tagged one and the topic are denied', () => {
    const s = synthDefault();
    for (const request of [outsider, someRole, taggedOperator, fromTopic(s)]) {
      expect({ request, denied: sendIsDenied(scheduleQueue(s), request) }).toEqual({ request, denied: true });
    }
  });

  test('the redrive role and the listed redrive principals may not: the DLQ tools redrive to the work queue', () => {
    const ops = 'arn:aws:iam::123456789012:role/ops';
    const s = synthesize({ redrivePrincipals: [new iam.ArnPrincipal(ops)] });
    expect(sendIsDenied(scheduleQueue(s), redriveRole(s))).toBe(true);
    expect(sendIsDenied(scheduleQueue(s), { 'aws:PrincipalArn': ops })).toBe(true);
  });

  test('the schedule function may forward a due copy to both lanes’ queues; an outsider still may not', () => {
    const s = synthDefault();
    for (const queue of [s.ids.queue, s.ids.highPriorityQueue]) {
      expect(sendIsDenied(queuePolicy(s, queue), scheduleRole(s))).toBe(false);
      expect(sendIsDenied(queuePolicy(s, queue), outsider)).toBe(true);
    }
  });

  test('the schedule queue’s own redrive into the DLQ is not denied; the schedule function may not dead-letter', () => {
    const s = synthDefault();
    const dlq = queuePolicy(s, s.ids.deadLetterQueue);
    expect(sendIsDenied(dlq, { 'aws:SourceArn': arnOf(id(s.stack.pipeline.scheduleQueue, s)) })).toBe(false);
    expect(sendIsDenied(dlq, scheduleRole(s))).toBe(true);
  });
});

describe('no queue of the pipeline yields to a principal tag', () => {
  test('no queue policy statement has an aws:PrincipalTag condition', () => {
    const s = synthDefault();
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy'));
    expect(policies.length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(policies)).not.toMatch(/PrincipalTag/i);
  });

  test('on every queue the topic or function feeds, a self-tagged principal and an outsider are denied; the redrive role is not', () => {
    const s = synthDefault();
    for (const queue of pipelineQueues(s)) {
      const statements = queuePolicy(s, queue);
      expect(sendIsDenied(statements, taggedOperator)).toBe(true);
      expect(sendIsDenied(statements, outsider)).toBe(true);
      expect(sendIsDenied(statements, redriveRole(s))).toBe(false);
    }
  });
});

describe('redrivePrincipals from context strings', () => {
  const context = (redrivePrincipals: string) => ({
    'emailPipeline:senderAddress': 'noreply@example.com',
    'emailPipeline:sesIdentity': 'example.com',
    'emailPipeline:redrivePrincipals': redrivePrincipals,
  });

  test('role and user ARNs become exemptions by aws:PrincipalArn', () => {
    const { app } = splitContextSettings(
      settingsFromContext(context('arn:aws:iam::123456789012:role/ops, arn:aws:iam::123456789012:user/alice')),
    );
    const s = synthesize({ redrivePrincipals: principalsFromStrings(app.redrivePrincipals ?? []) });
    const statements = queuePolicy(s, s.ids.queue);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:role/ops' })).toBe(false);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': 'arn:aws:iam::123456789012:user/alice' })).toBe(false);
    expect(sendIsDenied(statements, someRole)).toBe(true);
  });

  test('an account id or root ARN is refused, naming the setting', () => {
    expect(() => settingsFromContext(context('123456789012'))).toThrow(/emailPipeline:redrivePrincipals/);
    expect(() => settingsFromContext(context('arn:aws:iam::123456789012:root'))).toThrow(SettingsError);
  });
});

describe('DLQ policy: only the function and the queue redrive send', () => {
  test("the function's role may dead-letter", () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.deadLetterQueue), { 'aws:PrincipalArn': arnOf(s.ids.role) })).toBe(false);
  });

  test('anyone else of the account is denied, so nothing can be planted for a redrive to mail', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.deadLetterQueue), someRole)).toBe(true);
    expect(sendIsDenied(queuePolicy(s, s.ids.deadLetterQueue), fromTopic(s))).toBe(true);
  });

  test("the work queue's own redrive (source ARN of the queue) is not denied", () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.deadLetterQueue), { 'aws:SourceArn': arnOf(s.ids.queue) })).toBe(false);
  });

  test("the high-priority queue's own redrive is not denied either (one DLQ for both lanes)", () => {
    const s = synthDefault();
    expect(
      sendIsDenied(queuePolicy(s, s.ids.deadLetterQueue), { 'aws:SourceArn': arnOf(s.ids.highPriorityQueue) }),
    ).toBe(false);
  });

  test('RedriveAllowPolicy names the work queue, by the name the queue is given', () => {
    const s = synthDefault();
    const dlq = resource(s.template, s.ids.deadLetterQueue).Properties;
    const queueName = resource(s.template, s.ids.queue).Properties.QueueName as string;
    const highName = resource(s.template, s.ids.highPriorityQueue).Properties.QueueName as string;
    expect(dlq.RedriveAllowPolicy.redrivePermission).toBe('byQueue');
    expect(Stack.of(s.stack).resolve(s.stack.pipeline.queue.queueArn)).toEqual(arnOf(s.ids.queue));
    const arn = (name: string) => ({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':sqs:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          `:${name}`,
        ],
      ],
    });
    const scheduleName = resource(s.template, id(s.stack.pipeline.scheduleQueue)).Properties.QueueName as string;
    // The high-priority queue and the schedule queue share the DLQ: the three, by the names they are given.
    expect(dlq.RedriveAllowPolicy.sourceQueueArns).toEqual([arn(queueName), arn(highName), arn(scheduleName)]);
    expect(queueName.length).toBeLessThanOrEqual(80);
    expect(highName.length).toBeLessThanOrEqual(80);
  });
});

describe("ledger buffer policy: only SES's events rule sends, so nobody can plant an event the ledger records", () => {
  const ledgerIds = (s: Synthesized) => {
    const { ledger } = s.stack.pipeline;
    const id = (c: { node: { defaultChild?: unknown } }) => s.stack.getLogicalId(c.node.defaultChild as CfnResource);
    return {
      buffer: id(ledger.bufferQueue),
      bufferDlq: id(ledger.bufferDeadLetterQueue),
      rule: id(ledger.eventsRule),
    };
  };
  /** EventBridge delivering for a rule: the rule's ARN is the source. */
  const fromRule = (rule: string) => ({ 'aws:SourceArn': arnOf(rule) });

  test('EventBridge delivering for the SES events rule is not denied', () => {
    const s = synthDefault();
    const { buffer, rule } = ledgerIds(s);
    expect(sendIsDenied(queuePolicy(s, buffer), fromRule(rule))).toBe(false);
  });

  test("the pipeline's topic, any other rule and any topic are denied", () => {
    const s = synthDefault();
    const { buffer } = ledgerIds(s);
    expect(sendIsDenied(queuePolicy(s, buffer), fromTopic(s))).toBe(true);
    expect(
      sendIsDenied(queuePolicy(s, buffer), { 'aws:SourceArn': 'arn:aws:events:eu-west-1:123456789012:rule/forged' }),
    ).toBe(true);
    expect(sendIsDenied(queuePolicy(s, buffer), { 'aws:SourceArn': 'arn:aws:sns:eu-west-1:210987654321:forged' })).toBe(
      true,
    );
  });

  test("a principal of the account, the send function's role and a tagged operator are all denied", () => {
    const s = synthDefault();
    const statements = queuePolicy(s, ledgerIds(s).buffer);
    expect(sendIsDenied(statements, someRole)).toBe(true);
    expect(sendIsDenied(statements, { 'aws:PrincipalArn': arnOf(s.ids.role) })).toBe(true);
    expect(sendIsDenied(statements, taggedOperator)).toBe(true);
  });

  test("its DLQ takes only what the rule could not deliver and the buffer's own redrive", () => {
    const s = synthDefault();
    const { buffer, bufferDlq, rule } = ledgerIds(s);
    const statements = queuePolicy(s, bufferDlq);
    expect(sendIsDenied(statements, fromRule(rule))).toBe(false);
    expect(sendIsDenied(statements, { 'aws:SourceArn': arnOf(buffer) })).toBe(false);
    expect(sendIsDenied(statements, someRole)).toBe(true);
    expect(sendIsDenied(statements, fromTopic(s))).toBe(true);
  });

  test('the redrive role may send to neither the buffer nor its DLQ: the ledger DLQ is redriven by the ledger function reading it', () => {
    const s = synthDefault();
    const { buffer, bufferDlq } = ledgerIds(s);
    const redriveRole = {
      'aws:PrincipalArn': arnOf(s.stack.getLogicalId(s.stack.pipeline.redriveRole.node.defaultChild as CfnResource)),
    };
    for (const queue of [buffer, bufferDlq]) {
      expect(sendIsDenied(queuePolicy(s, queue), redriveRole)).toBe(true);
      // One Deny each, exempting no principal.
      expect(JSON.stringify(queuePolicy(s, queue).filter((st) => st.Effect === 'Deny'))).not.toContain(
        'aws:PrincipalArn',
      );
    }
  });
});

describe('SNS subscription redrive policy', () => {
  function subscriptionDlq(s: Synthesized): string {
    return Stack.of(s.stack).getLogicalId(
      s.stack.pipeline.subscriptionDeadLetterQueue.node.defaultChild as CfnResource,
    );
  }

  test('the subscription has a redrive policy to its own DLQ', () => {
    const s = synthDefault();
    const [subscription] = Object.values(s.template.findResources('AWS::SNS::Subscription'));
    expect(subscription?.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(subscriptionDlq(s)) });
  });

  test('that DLQ is encrypted with the queue key (SNS may use it for this topic) and keeps 14 days', () => {
    const s = synthDefault();
    const props = resource(s.template, subscriptionDlq(s)).Properties;
    expect(props.KmsMasterKeyId).toEqual(arnOf(s.ids.queueKey));
    expect(props.MessageRetentionPeriod).toBe(14 * 86_400);
  });

  test('only the topic (and the redrive role) may send to it', () => {
    const s = synthDefault();
    const statements = queuePolicy(s, subscriptionDlq(s));
    expect(sendIsDenied(statements, fromTopic(s))).toBe(false);
    expect(sendIsDenied(statements, someRole)).toBe(true);
    expect(sendIsDenied(statements, redriveRole(s))).toBe(false);
  });
});

describe('alarm keys', () => {
  test("CloudWatch may use each (paging, warning) only for this account's alarms", () => {
    const s = synthDefault();
    const keys = Object.values(s.template.findResources('AWS::KMS::Key'));
    const grants = keys
      .flatMap((k) => k.Properties.KeyPolicy.Statement as Statement[])
      .filter((st) => st.Sid === 'CloudWatchAlarmsUseKey');
    expect(grants).toHaveLength(2);
    expect(grants[1]?.Condition).toEqual(grants[0]?.Condition);
    expect(grants[0]?.Condition).toEqual({
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':cloudwatch:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':alarm:*',
            ],
          ],
        },
      },
    });
  });
});

describe('publisherPrincipals from context strings', () => {
  test('account ids and ARNs become the topic allow-list', () => {
    const s = synthesize({
      publisherPrincipals: principalsFromStrings(['210987654321', 'arn:aws:iam::123456789012:role/orders']),
    });
    const policy = Object.values(s.template.findResources('AWS::SNS::TopicPolicy')).find((p) =>
      JSON.stringify(p.Properties.Topics).includes(`"${s.ids.topic}"`),
    );
    const deny = (policy?.Properties.PolicyDocument.Statement as Statement[]).find(
      (st) => st.Sid === 'OnlyConfiguredPublishers',
    );
    expect(deny?.Condition).toEqual({
      StringNotEquals: { 'aws:PrincipalAccount': ['210987654321'] },
      ArnNotEquals: { 'aws:PrincipalArn': ['arn:aws:iam::123456789012:role/orders'] },
    });
  });
});

describe('high-priority queue policy: only the high-priority topic sends', () => {
  test('SNS delivering from the high-priority topic is not denied', () => {
    const s = synthDefault();
    expect(
      sendIsDenied(queuePolicy(s, s.ids.highPriorityQueue), { 'aws:SourceArn': { Ref: s.ids.highPriorityTopic } }),
    ).toBe(false);
  });

  test("SNS delivering from the pipeline's (normal) topic is denied: priority is the high-priority topic's to give", () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.highPriorityQueue), fromTopic(s))).toBe(true);
  });

  test('the work queue takes nothing from the high-priority topic: no message is queued twice', () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.queue), { 'aws:SourceArn': { Ref: s.ids.highPriorityTopic } })).toBe(true);
  });

  test('SNS delivering from another topic is denied', () => {
    const s = synthDefault();
    const other = { 'aws:SourceArn': 'arn:aws:sns:us-east-1:123456789012:other' };
    expect(sendIsDenied(queuePolicy(s, s.ids.highPriorityQueue), other)).toBe(true);
  });

  test("the function's own role may send: a retried high-priority message goes back to this queue", () => {
    const s = synthDefault();
    expect(sendIsDenied(queuePolicy(s, s.ids.highPriorityQueue), { 'aws:PrincipalArn': arnOf(s.ids.role) })).toBe(
      false,
    );
  });

  test('a principal of the account, a self-tagged operator and an outsider are denied; the redrive role is not', () => {
    const s = synthDefault();
    const policy = queuePolicy(s, s.ids.highPriorityQueue);
    expect(sendIsDenied(policy, someRole)).toBe(true);
    expect(sendIsDenied(policy, taggedOperator)).toBe(true);
    expect(sendIsDenied(policy, outsider)).toBe(true);
    expect(sendIsDenied(policy, redriveRole(s))).toBe(false);
  });

  test('no statement of its policy has an aws:PrincipalTag condition', () => {
    const s = synthDefault();
    expect(JSON.stringify(queuePolicy(s, s.ids.highPriorityQueue))).not.toContain('aws:PrincipalTag');
  });
});
