/**
 * The customer-managed keys (lib/construct/common/keys.ts) as the pipeline uses them: the topic, the
 * queues and both tables encrypted at rest, every key rotating, a table key's callers granted
 * through DynamoDB only.
 */
import { CfnResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { arnOf, resource, synthDefault, synthesize } from '../../../helpers';

const accountRoot = {
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']],
};
type Statement = Record<string, any>;

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
