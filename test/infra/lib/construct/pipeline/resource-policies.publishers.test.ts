/**
 * The topic's and the queues' resource policies on transport and publishers
 * (lib/construct/pipeline/resource-policies.ts): TLS only, and who may publish to the topic.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import { SettingsError } from '../../../../../lib/settings';
import { arnOf, resource, synthDefault, synthesize, Synthesized } from '../../../helpers';

const accountRoot = {
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']],
};
type Statement = Record<string, any>;

/** Statements of the resource policy (queue or topic policy) attached to a resource. */
function resourcePolicy(
  s: Synthesized,
  type: 'AWS::SQS::QueuePolicy' | 'AWS::SNS::TopicPolicy',
  logicalId: string,
): Statement[] {
  const listKey = type === 'AWS::SQS::QueuePolicy' ? 'Queues' : 'Topics';
  const policies = Object.values(s.template.findResources(type)).filter((p) =>
    (p.Properties[listKey] as Array<{ Ref: string }>).some((r) => r.Ref === logicalId),
  );
  expect(policies).toHaveLength(1);
  return policies[0].Properties.PolicyDocument.Statement;
}

const denyInsecure = (s: Statement) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false';

describe('TLS only', () => {
  test('the queue policy denies every SQS action without TLS', () => {
    const s = synthDefault();
    const deny = resourcePolicy(s, 'AWS::SQS::QueuePolicy', s.ids.queue).filter(denyInsecure);
    expect(deny).toEqual([expect.objectContaining({ Action: 'sqs:*', Resource: arnOf(s.ids.queue) })]);
  });

  test('the DLQ policy denies every SQS action without TLS', () => {
    const s = synthDefault();
    const deny = resourcePolicy(s, 'AWS::SQS::QueuePolicy', s.ids.deadLetterQueue).filter(denyInsecure);
    expect(deny).toEqual([expect.objectContaining({ Action: 'sqs:*', Resource: arnOf(s.ids.deadLetterQueue) })]);
  });

  test('the topic policy denies publishing without TLS', () => {
    const s = synthDefault();
    const deny = resourcePolicy(s, 'AWS::SNS::TopicPolicy', s.ids.topic).filter(denyInsecure);
    expect(deny).toEqual([expect.objectContaining({ Action: 'sns:Publish', Resource: { Ref: s.ids.topic } })]);
  });
});

describe('topic policy: who may publish', () => {
  test('by default only the deploying account may publish', () => {
    const s = synthDefault();
    const statements = resourcePolicy(s, 'AWS::SNS::TopicPolicy', s.ids.topic);
    const allows = statements.filter((st) => st.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Action: 'sns:Publish',
        Principal: { AWS: accountRoot },
        Resource: { Ref: s.ids.topic },
      }),
    ]);
    const onlyPublishers = statements.find((st) => st.Sid === 'OnlyConfiguredPublishers');
    expect(onlyPublishers).toEqual({
      Sid: 'OnlyConfiguredPublishers',
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 'sns:Publish',
      Resource: { Ref: s.ids.topic },
      Condition: { StringNotEquals: { 'aws:PrincipalAccount': [{ Ref: 'AWS::AccountId' }] } },
    });
  });

  test('configured publishers are allowed and everyone else is denied', () => {
    const role = 'arn:aws:iam::444455556666:role/orders-service';
    const s = synthesize({
      publisherPrincipals: [new iam.AccountPrincipal('111122223333'), new iam.ArnPrincipal(role)],
    });
    const statements = resourcePolicy(s, 'AWS::SNS::TopicPolicy', s.ids.topic);
    const allowed = statements
      .filter((st) => st.Effect === 'Allow' && st.Action === 'sns:Publish')
      .flatMap((st) => [].concat(st.Principal.AWS));
    expect(allowed).toEqual(
      expect.arrayContaining([
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::111122223333:root']] },
        role,
      ]),
    );
    expect(allowed).not.toContainEqual(accountRoot);
    expect(statements.find((st) => st.Sid === 'OnlyConfiguredPublishers')?.Condition).toEqual({
      StringNotEquals: { 'aws:PrincipalAccount': ['111122223333'] },
      ArnNotEquals: { 'aws:PrincipalArn': [role] },
    });
  });

  test('cross-account publishers may use the topic key', () => {
    const s = synthesize({ publisherPrincipals: [new iam.AccountPrincipal('111122223333')] });
    const statements: Statement[] = resource(s.template, s.ids.topicKey).Properties.KeyPolicy.Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::111122223333:root']] } },
      }),
    );
  });

  test('a publisher that is not an account, role or ARN fails the synth', () => {
    expect(() => synthesize({ publisherPrincipals: [new iam.ServicePrincipal('events.amazonaws.com')] })).toThrow(
      SettingsError,
    );
    expect(() => synthesize({ publisherPrincipals: [] })).toThrow(/publisherPrincipals=\[\]/);
  });
});
