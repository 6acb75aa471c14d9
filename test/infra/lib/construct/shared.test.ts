import { CfnResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SettingsError } from '../../../../lib/settings';
import { arnOf, resource, synthDefault, synthesize, Synthesized } from '../../helpers';

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

describe('encryption at rest', () => {
  test('the topic is encrypted with its own customer-managed key', () => {
    const s = synthDefault();
    expect(resource(s.template, s.ids.topic).Properties.KmsMasterKeyId).toEqual(arnOf(s.ids.topicKey));
  });

  test('the queue and the DLQ are encrypted with the queue key', () => {
    const s = synthDefault();
    for (const queue of [s.ids.queue, s.ids.deadLetterQueue]) {
      const props = resource(s.template, queue).Properties;
      expect(props.KmsMasterKeyId).toEqual(arnOf(s.ids.queueKey));
      expect(props.SqsManagedSseEnabled).toBeUndefined();
    }
  });

  test('every key rotates', () => {
    const keys = Object.values(synthDefault().template.findResources('AWS::KMS::Key'));
    expect(keys.length).toBeGreaterThanOrEqual(3); // topic, queues, alarm topic
    for (const key of keys) expect(key.Properties.EnableKeyRotation).toBe(true);
  });

  test("SNS may use the queue key only when delivering from one of the pipeline's topics", () => {
    const s = synthDefault();
    const statements: Statement[] = resource(s.template, s.ids.queueKey).Properties.KeyPolicy.Statement;
    const forSns = statements.filter((st) => st.Principal?.Service === 'sns.amazonaws.com');
    expect(forSns).toHaveLength(2);
    for (const [statement, topic] of [
      [forSns[0], s.ids.topic],
      [forSns[1], s.ids.highPriorityTopic],
    ] as const) {
      expect(statement).toMatchObject({
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Condition: { ArnEquals: { 'aws:SourceArn': { Ref: topic } } },
      });
    }
  });

  test('both tables are encrypted with one customer-managed key, with rotation', () => {
    const s = synthDefault();
    const tableKey = s.stack.getLogicalId(s.stack.pipeline.tableKey!.node.defaultChild as CfnResource);
    const ledgerTable = s.stack.getLogicalId(s.stack.pipeline.ledger.table.node.defaultChild as CfnResource);
    for (const table of [s.ids.table, ledgerTable]) {
      expect(resource(s.template, table).Properties.SSESpecification).toEqual({
        SSEEnabled: true,
        SSEType: 'KMS',
        KMSMasterKeyId: arnOf(tableKey),
      });
    }
    expect(resource(s.template, tableKey).Properties.EnableKeyRotation).toBe(true);
  });

  test("the table key's policy grants no service and no other account: its callers are granted through IAM, via DynamoDB", () => {
    const s = synthDefault();
    const tableKey = s.stack.getLogicalId(s.stack.pipeline.tableKey!.node.defaultChild as CfnResource);
    const statements: Statement[] = resource(s.template, tableKey).Properties.KeyPolicy.Statement;
    expect(statements).toEqual([expect.objectContaining({ Effect: 'Allow', Principal: { AWS: accountRoot } })]);
  });

  test('customerManagedTableKey=false uses the AWS-managed key for both tables and creates no table key', () => {
    const s = synthesize({ customerManagedTableKey: false });
    const ledgerTable = s.stack.getLogicalId(s.stack.pipeline.ledger.table.node.defaultChild as CfnResource);
    for (const table of [s.ids.table, ledgerTable]) {
      expect(resource(s.template, table).Properties.SSESpecification).toEqual({ SSEEnabled: true });
    }
    expect(s.stack.pipeline.tableKey).toBeUndefined();
  });

  test('grantStatusLookup gives GetItem on both tables and their key through DynamoDB only', () => {
    const s = synthesize({}, (stack) => {
      stack.pipeline.grantStatusLookup(new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() }));
    });
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes('Operator'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
    const tableKey = s.stack.getLogicalId(s.stack.pipeline.tableKey!.node.defaultChild as CfnResource);
    const ledgerTable = s.stack.getLogicalId(s.stack.pipeline.ledger.table.node.defaultChild as CfnResource);
    expect(statements).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:GetItem',
        Resource: expect.arrayContaining([arnOf(s.ids.table), arnOf(ledgerTable)]),
      }),
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:DescribeKey'],
        Resource: arnOf(tableKey),
        Condition: {
          StringEquals: {
            'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
          },
        },
      }),
    ]);
  });
});

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
