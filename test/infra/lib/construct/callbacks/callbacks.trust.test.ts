/**
 * The callbacks' trust boundaries, read from the template: whatever reaches the callbacks queue is
 * POSTed, signed with the publishers' keys, to their servers, so nobody but the delivery-status
 * topic (and operators redriving) may send to it, and nobody but the ledger function may publish
 * on that topic; the callback function reads its own secrets and no other; no secret value is in
 * the template.
 */
import type { CfnResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { CALLBACK_ENV } from '../../../../../lambdas/kernel/callbacks/names';
import { CALLBACK_PROPS, arnOf, functionPolicyStatements, synthesize, type Synthesized } from '../../../helpers';

type Statement = Record<string, any>;
/** What IAM knows of a request: condition keys and their values (CloudFormation values, compared as JSON). */
type Request = Readonly<Record<string, unknown>>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const list = <T>(value: T | T[]): T[] => ([] as T[]).concat(value);

/** Whether a Deny of `statements` applies to `action` for this request (the negated ARN operators as IAM reads them). */
function denied(statements: Statement[], action: string, request: Request): boolean {
  return statements.some(
    (st) =>
      st.Effect === 'Deny' &&
      list<string>(st.Action).includes(action) &&
      st.Condition?.Bool === undefined &&
      Object.entries(st.Condition ?? {}).every(([operator, keys]) => {
        if (operator !== 'ArnNotEquals') throw new Error(`${operator} is not modelled by this test`);
        // Every key must differ for the deny to apply: one allowed value that matches lets the request through.
        return Object.entries(keys as Record<string, unknown>).every(
          ([key, values]) => !(key in request) || !list(values).some((v) => same(v, request[key])),
        );
      }),
  );
}

const ACCOUNT = '123456789012';
const outsider = {
  'aws:PrincipalArn': 'arn:aws:iam::210987654321:role/redrive',
  'aws:PrincipalAccount': '210987654321',
};
/** A principal of the account with sqs:SendMessage or sns:Publish (PowerUser, a CI role). */
const someRole = { 'aws:PrincipalArn': `arn:aws:iam::${ACCOUNT}:role/ci` };
const publisher = `arn:aws:iam::${ACCOUNT}:role/orders`;

let s: Synthesized;
beforeAll(() => {
  s = synthesize({ ...CALLBACK_PROPS, publisherPrincipals: [new iam.ArnPrincipal(publisher)] });
});
const id = (c: { node: { defaultChild?: unknown } }) => s.stack.getLogicalId(c.node.defaultChild as CfnResource);
const callbacks = () => s.stack.pipeline.callbacks!;
const policyOf = (type: string, property: string, logicalId: string): Statement[] => {
  const policies = Object.values(s.template.findResources(type)).filter((p) =>
    list(p.Properties[property]).some((r) => same(r, { Ref: logicalId })),
  );
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement as Statement[];
};
const queuePolicy = (queue: { node: { defaultChild?: unknown } }) =>
  policyOf('AWS::SQS::QueuePolicy', 'Queues', id(queue));
const fromTopic = (topic: { node: { defaultChild?: unknown } }) => ({ 'aws:SourceArn': { Ref: id(topic) } });
const asRole = (role: { node: { defaultChild?: unknown } }) => ({ 'aws:PrincipalArn': arnOf(id(role)) });

describe('the callbacks queue', () => {
  test('an outsider, a principal of the account and a publisher are denied; the delivery-status topic is not', () => {
    const policy = queuePolicy(callbacks().queue);
    for (const request of [outsider, someRole, { 'aws:PrincipalArn': publisher }]) {
      expect(denied(policy, 'sqs:SendMessage', request)).toBe(true);
    }
    expect(denied(policy, 'sqs:SendMessage', fromTopic(s.stack.pipeline.ledger.deliveryStatusTopic))).toBe(false);
    // Only that topic's deliveries are allowed at all.
    const allows = policy.filter((st) => st.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'sns.amazonaws.com' },
        Condition: { ArnEquals: fromTopic(s.stack.pipeline.ledger.deliveryStatusTopic) },
      }),
    ]);
  });

  test('the pipeline’s other topics cannot feed it: a message published for sending is never POSTed', () => {
    const policy = queuePolicy(callbacks().queue);
    for (const topic of [s.stack.pipeline.topic, s.stack.pipeline.highPriorityTopic]) {
      expect(denied(policy, 'sqs:SendMessage', fromTopic(topic))).toBe(true);
    }
  });

  test('the redrive role (callbacks redrive, replay) and the send function (its dead letters) may send; the callback function may not', () => {
    const policy = queuePolicy(callbacks().queue);
    expect(denied(policy, 'sqs:SendMessage', asRole(s.stack.pipeline.redriveRole))).toBe(false);
    expect(denied(policy, 'sqs:SendMessage', asRole(s.stack.pipeline.role))).toBe(false);
    for (const role of [
      callbacks().role,
      s.stack.pipeline.scheduleFunction.role!,
      s.stack.pipeline.ledger.ledgerFunction.role!,
    ]) {
      expect(denied(policy, 'sqs:SendMessage', asRole(role))).toBe(true);
    }
  });

  test('its DLQ admits only the callback function, the queue’s redrive and the topic’s undeliverable messages', () => {
    const policy = queuePolicy(callbacks().deadLetterQueue);
    for (const request of [outsider, someRole, asRole(s.stack.pipeline.redriveRole), asRole(s.stack.pipeline.role)]) {
      expect(denied(policy, 'sqs:SendMessage', request)).toBe(true);
    }
    for (const request of [
      asRole(callbacks().role),
      { 'aws:SourceArn': arnOf(id(callbacks().queue)) },
      fromTopic(s.stack.pipeline.ledger.deliveryStatusTopic),
    ]) {
      expect(denied(policy, 'sqs:SendMessage', request)).toBe(false);
    }
  });
});

describe('the delivery-status topic', () => {
  test('only the ledger function may publish: a forged status cannot reach the publishers’ webhooks', () => {
    const policy = policyOf('AWS::SNS::TopicPolicy', 'Topics', id(s.stack.pipeline.ledger.deliveryStatusTopic));
    const ledgerRole = s.stack.pipeline.ledger.ledgerFunction.role!;
    for (const request of [
      outsider,
      someRole,
      { 'aws:PrincipalArn': publisher },
      asRole(callbacks().role),
      asRole(s.stack.pipeline.role),
      asRole(s.stack.pipeline.redriveRole),
    ]) {
      expect(denied(policy, 'sns:Publish', request)).toBe(true);
    }
    expect(denied(policy, 'sns:Publish', asRole(ledgerRole))).toBe(false);
  });

  test('the callback function may not publish anywhere', () => {
    const statements = functionPolicyStatements(s.template, id(callbacks().callbackFunction));
    expect(statements.flatMap((st) => list<string>(st.Action)).filter((a) => a.startsWith('sns:'))).toEqual([]);
  });
});

describe('the signing secrets', () => {
  test('the callback function reads its own secrets and no other: no wildcard, no other secrets action', () => {
    const statements = functionPolicyStatements(s.template, id(callbacks().callbackFunction));
    const secretStatements = statements.filter((st) =>
      list<string>(st.Action).some((a) => a.startsWith('secretsmanager:')),
    );
    expect(secretStatements).toEqual([
      {
        Sid: 'ReadSigningKeys',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: Object.values(callbacks().signingSecrets).map((secret) => ({ Ref: id(secret) })),
      },
    ]);
    expect(JSON.stringify(statements)).not.toMatch(/secretsmanager:\*|"Resource":"\*"/);
    expect(statements.some((st) => st.Condition !== undefined && JSON.stringify(st).includes('secretsmanager'))).toBe(
      false,
    );
  });

  test('no other function of the pipeline may read them', () => {
    const own = id(callbacks().callbackFunction);
    for (const fn of Object.keys(s.template.findResources('AWS::Lambda::Function')).filter((f) => f !== own)) {
      const statements = functionPolicyStatements(s.template, fn);
      expect(JSON.stringify(statements)).not.toContain('secretsmanager');
    }
  });

  test('the template holds no secret value: generated by CloudFormation, named by ARN in the function', () => {
    const json = JSON.stringify(s.template.toJSON());
    // A Standard Webhooks secret (`whsec_` and base64) appears nowhere; the descriptions name only its form.
    expect(json.match(/whsec_[A-Za-z0-9+/=]{16,}/g)).toBeNull();
    expect(json.includes('"SecretString"')).toBe(false);
    for (const secret of Object.values(s.template.findResources('AWS::SecretsManager::Secret'))) {
      expect(secret.Properties).not.toHaveProperty('SecretString');
      expect(secret.Properties.GenerateSecretString.SecretStringTemplate).toBe('{}');
    }
    const env = Object.values(s.template.findResources('AWS::Lambda::Function')).find(
      (f) => f.Properties.Environment?.Variables?.[CALLBACK_ENV.targets] !== undefined,
    )?.Properties.Environment.Variables;
    const targets = JSON.stringify(env?.[CALLBACK_ENV.targets]);
    expect(targets).toContain('secretArn');
    expect(targets).not.toMatch(/\\"secret\\"/);
  });
});
