import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CfnResource } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import {
  LEDGER_INTERNAL,
  LEDGER_STATUS_INDEX,
  LEDGER_TABLE,
  LEDGER_TEAM,
} from '../../../../../lambdas/kernel/ledger/schema';
import { ENV, LEDGER_ENV } from '../../../../../lambdas/kernel/environment';
import type { EmailPipelineStack } from '../../../../../lib/construct/email-pipeline-stack';
import { LEDGER_FUNCTIONS } from '../../../../../lib/construct/ledger/send-ledger';
import { CANCEL_WRITES } from '../../../../../lib/construct/ledger/functions';
import type { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { recordPipelineEvent } from '../../../../../lambdas/runtime/ledger-store';
import {
  arnOf,
  functionPolicyStatements,
  rendered,
  resource,
  statementsFor,
  synthDefault,
  synthesize,
} from '../../../helpers';

const asList = <T>(v: T | T[]): T[] => ([] as T[]).concat(v);
const ref = (stack: EmailPipelineStack, c: IConstruct) => ({
  Ref: stack.getLogicalId(c.node.defaultChild as CfnResource),
});
const idOf = (stack: EmailPipelineStack, c: IConstruct) => stack.getLogicalId(c.node.defaultChild as CfnResource);
/** kms:ViaService of DynamoDB in the stack's region. */
const viaDynamoDb = { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] };

function defaults() {
  const { template, stack } = synthDefault();
  return { template, stack, ledger: stack.pipeline.ledger };
}

describe('configuration set and event destination', () => {
  test('the construct owns a configuration set, and the send function uses it', () => {
    const { template, stack, ledger } = defaults();
    template.resourceCountIs('AWS::SES::ConfigurationSet', 1);
    const env = resource(template, idOf(stack, stack.pipeline.sendFunction)).Properties.Environment.Variables;
    expect(env[ENV.configurationSetName]).toEqual(ref(stack, ledger.configurationSet!));
  });

  test("every delivery event type goes to the account's default event bus, and nothing else (no opens, clicks)", () => {
    const { template, stack, ledger } = defaults();
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      ConfigurationSetName: ref(stack, ledger.configurationSet!),
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: ['send', 'delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay', 'renderingFailure'],
        EventBridgeDestination: { EventBusArn: Match.anyValue() },
      },
    });
    const destinations = Object.values(template.findResources('AWS::SES::ConfigurationSetEventDestination'));
    const bus = destinations.find((d) => d.Properties.EventDestination.EventBridgeDestination)?.Properties
      .EventDestination.EventBridgeDestination.EventBusArn;
    expect(rendered(bus)).toBe('arn:{AWS::Partition}:events:{AWS::Region}:{AWS::AccountId}:event-bus/default');
    // No SNS destination feeds the ledger any more: a topic anyone allowed to publish can write to is not evidence.
    expect(destinations.filter((d) => d.Properties.EventDestination.SnsDestination)).toEqual([]);
  });

  test('deliveries, bounces, complaints, rejects and rendering failures are also counted in CloudWatch by configuration set', () => {
    const { template } = defaults();
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: {
        MatchingEventTypes: ['delivery', 'bounce', 'complaint', 'reject', 'renderingFailure'],
        CloudWatchDestination: {
          DimensionConfigurations: [
            {
              DimensionName: 'ses:configuration-set',
              DimensionValueSource: 'messageTag',
              DefaultDimensionValue: 'none',
            },
          ],
        },
      },
    });
  });

  test('a given configuration set is not created: it gains the event destination and the send function uses it', () => {
    const { template, stack } = synthesize({ configurationSetName: 'transactional' });
    template.resourceCountIs('AWS::SES::ConfigurationSet', 0);
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      ConfigurationSetName: 'transactional',
      EventDestination: { EventBridgeDestination: { EventBusArn: Match.anyValue() } },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ detail: { mail: { tags: { 'ses:configuration-set': ['transactional'] } } } }),
    });
    const env = resource(template, idOf(stack, stack.pipeline.sendFunction)).Properties.Environment.Variables;
    expect(env[ENV.configurationSetName]).toBe('transactional');
  });
});

describe("SES's events rule and the buffer", () => {
  test("a rule on the default bus takes SES's own events of this account and configuration set, of the types the ledger records", () => {
    const { template, stack, ledger } = defaults();
    const rule = resource(template, idOf(stack, ledger.eventsRule)).Properties;
    expect(rule.EventBusName).toBeUndefined(); // the default bus
    expect(rule.EventPattern).toEqual({
      source: ['aws.ses'],
      account: [{ Ref: 'AWS::AccountId' }],
      'detail-type': [
        'Email Sent',
        'Email Delivered',
        'Email Bounced',
        'Email Complaint Received',
        'Email Rejected',
        'Email Delivery Delayed',
        'Email Rendering Failed',
      ],
      detail: { mail: { tags: { 'ses:configuration-set': [ref(stack, ledger.configurationSet!)] } } },
    });
  });

  test('its one target is the buffer queue, with retries for a day and the buffer DLQ for what is not delivered', () => {
    const { template, stack, ledger } = defaults();
    const targets = resource(template, idOf(stack, ledger.eventsRule)).Properties.Targets as Array<Record<string, any>>;
    expect(targets).toEqual([
      expect.objectContaining({
        Arn: arnOf(idOf(stack, ledger.bufferQueue)),
        DeadLetterConfig: { Arn: arnOf(idOf(stack, ledger.bufferDeadLetterQueue)) },
        RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
      }),
    ]);
    // The whole event as the body: the ledger reads EventBridge's envelope (no input transformer).
    expect(targets[0]?.InputTransformer).toBeUndefined();
    expect(targets[0]?.Input).toBeUndefined();
  });

  test('EventBridge may use the buffer key, for this account only; SNS no longer may', () => {
    const { template, stack, ledger } = defaults();
    const key = resource(template, idOf(stack, ledger.queueKey)).Properties;
    const services = (key.KeyPolicy.Statement as Array<Record<string, any>>).filter((s) => s.Principal?.Service);
    expect(services).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      }),
    ]);
  });

  test('the delivery-status topic is encrypted with the ledger topic key, which no service principal may use', () => {
    const { template, stack, ledger } = defaults();
    expect(resource(template, idOf(stack, ledger.deliveryStatusTopic)).Properties.KmsMasterKeyId).toEqual(
      arnOf(idOf(stack, ledger.topicKey)),
    );
    const key = resource(template, idOf(stack, ledger.topicKey)).Properties;
    expect(key.EnableKeyRotation).toBe(true);
    expect((key.KeyPolicy.Statement as Array<Record<string, any>>).filter((s) => s.Principal?.Service)).toEqual([]);
  });

  test('no SNS topic or subscription carries SES events any more', () => {
    const { template, stack, ledger } = defaults();
    const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription'));
    expect(
      subscriptions.filter(
        (s) => JSON.stringify(s.Properties.Endpoint) === JSON.stringify(arnOf(idOf(stack, ledger.bufferQueue))),
      ),
    ).toEqual([]);
    expect(JSON.stringify(template.toJSON())).not.toContain('ses.amazonaws.com');
  });

  test('the buffer and its DLQ are encrypted with their own key, keep events 14 days and redrive after 5 receives', () => {
    const { template, stack, ledger } = defaults();
    const buffer = resource(template, idOf(stack, ledger.bufferQueue)).Properties;
    expect(buffer).toMatchObject({
      KmsMasterKeyId: arnOf(idOf(stack, ledger.queueKey)),
      MessageRetentionPeriod: 14 * 86_400,
      VisibilityTimeout: 6 * LEDGER_FUNCTIONS.ledgerTimeoutSeconds,
      RedrivePolicy: { deadLetterTargetArn: arnOf(idOf(stack, ledger.bufferDeadLetterQueue)), maxReceiveCount: 5 },
    });
    expect(resource(template, idOf(stack, ledger.bufferDeadLetterQueue)).Properties).toMatchObject({
      KmsMasterKeyId: arnOf(idOf(stack, ledger.queueKey)),
      MessageRetentionPeriod: 14 * 86_400,
      // A Lambda source too (its redrive mapping): 6 x the function timeout, as the buffer.
      VisibilityTimeout: 6 * LEDGER_FUNCTIONS.ledgerTimeoutSeconds,
    });
    expect(resource(template, idOf(stack, ledger.queueKey)).Properties.EnableKeyRotation).toBe(true);
  });

  test('the ledger function reads the buffer in batches with partial batch responses', () => {
    const { template, stack, ledger } = defaults();
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(idOf(stack, ledger.bufferQueue)),
      FunctionName: ref(stack, ledger.ledgerFunction),
      BatchSize: LEDGER_FUNCTIONS.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: LEDGER_FUNCTIONS.maxConcurrency },
    });
  });

  test('a second mapping reads the ledger DLQ, created disabled, with the same batches and partial batch responses', () => {
    const { template, stack, ledger } = defaults();
    const mappings = Object.entries(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      ([, r]) => JSON.stringify(r.Properties.FunctionName) === JSON.stringify(ref(stack, ledger.ledgerFunction)),
    );
    expect(mappings).toHaveLength(2);
    const [[id, dlq]] = mappings.filter(
      ([, r]) =>
        JSON.stringify(r.Properties.EventSourceArn) ===
        JSON.stringify(arnOf(idOf(stack, ledger.bufferDeadLetterQueue))),
    );
    const [[, buffer]] = mappings.filter(
      ([, r]) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify(arnOf(idOf(stack, ledger.bufferQueue))),
    );
    expect(dlq.Properties).toEqual({
      EventSourceArn: arnOf(idOf(stack, ledger.bufferDeadLetterQueue)),
      FunctionName: ref(stack, ledger.ledgerFunction),
      Enabled: false,
      BatchSize: buffer.Properties.BatchSize,
      MaximumBatchingWindowInSeconds: buffer.Properties.MaximumBatchingWindowInSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    expect(buffer.Properties.Enabled).not.toBe(false);
    // The CLI finds it by the stack output, and the redrive role is scoped to its ARN.
    expect(template.toJSON().Outputs.LedgerDeadLetterMappingId.Value).toEqual({ Ref: id });
    expect(stack.resolve(ledger.deadLetterMapping.id)).toEqual({ Ref: id });
  });

  test('the ledger function may receive and delete on the ledger DLQ and decrypt it with the buffer key', () => {
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.ledgerFunction));
    const on = (action: string) =>
      statementsFor(statements, action).flatMap((st) => asList(st.Resource).map((r) => JSON.stringify(r)));
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']) {
      expect(on(action)).toContain(JSON.stringify(arnOf(idOf(stack, ledger.bufferDeadLetterQueue))));
    }
    expect(on('kms:Decrypt')).toContain(JSON.stringify(arnOf(idOf(stack, ledger.queueKey))));
    // Reading the DLQ is all: the function never sends to the buffer or its DLQ.
    expect(statementsFor(statements, 'sqs:SendMessage')).toEqual([]);
  });
});

describe('ledger table', () => {
  test('is keyed by the dedupe key, expires items by TTL, and is protected like the idempotency table', () => {
    const { template, stack, ledger } = defaults();
    const table = template.toJSON().Resources[idOf(stack, ledger.table)];
    expect(table.Properties).toMatchObject({
      KeySchema: [{ AttributeName: LEDGER_TABLE.partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: expect.arrayContaining([{ AttributeName: LEDGER_TABLE.partitionKey, AttributeType: 'S' }]),
      TimeToLiveSpecification: { AttributeName: LEDGER_TABLE.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      DeletionProtectionEnabled: true,
    });
    expect(table.DeletionPolicy).toBe('Retain');
  });

  test('has one index, keys by outcome (sharded) and time, keys only: the smallest write per ledger write', () => {
    const { template, stack, ledger } = defaults();
    const table = template.toJSON().Resources[idOf(stack, ledger.table)];
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: LEDGER_STATUS_INDEX.indexName,
        KeySchema: [
          { AttributeName: LEDGER_STATUS_INDEX.partitionKey, KeyType: 'HASH' },
          { AttributeName: LEDGER_STATUS_INDEX.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(table.Properties.AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: LEDGER_STATUS_INDEX.partitionKey, AttributeType: 'S' },
        { AttributeName: LEDGER_STATUS_INDEX.sortKey, AttributeType: 'S' },
      ]),
    );
  });
});

describe('ledger function', () => {
  test('knows its table, the status topic and the dedupe window', () => {
    const { template, stack, ledger } = defaults();
    const env = resource(template, idOf(stack, ledger.ledgerFunction)).Properties.Environment.Variables;
    expect(env).toMatchObject({
      [LEDGER_ENV.tableName]: ref(stack, ledger.table),
      [LEDGER_ENV.deliveryStatusTopicArn]: ref(stack, ledger.deliveryStatusTopic),
      [LEDGER_ENV.retentionSeconds]: String(stack.pipeline.settings.dedupeWindowSeconds),
    });
  });

  test("knows where genuine events come from: the account, the configuration set and the send function's role", () => {
    const { template, stack, ledger } = defaults();
    const env = resource(template, idOf(stack, ledger.ledgerFunction)).Properties.Environment.Variables;
    expect(env.EVENTS_TOPIC_ARN).toBeUndefined();
    expect(env[LEDGER_ENV.accountId]).toEqual({ Ref: 'AWS::AccountId' });
    expect(env[LEDGER_ENV.configurationSetName]).toEqual(ref(stack, ledger.configurationSet!));
    // SES names the caller's role (not its ARN) in the ses:caller-identity tag.
    expect(env[LEDGER_ENV.senderRoleName]).toEqual(ref(stack, stack.pipeline.role));
  });

  test('a given configuration set is the one the ledger function expects in events', () => {
    const { template, stack } = synthesize({ configurationSetName: 'transactional' });
    const env = resource(template, idOf(stack, stack.pipeline.ledger.ledgerFunction)).Properties.Environment.Variables;
    expect(env[LEDGER_ENV.configurationSetName]).toBe('transactional');
  });

  test('knows the idempotency table and key prefix, to read the claim an event must match', () => {
    const { template, stack, ledger } = defaults();
    const env = resource(template, idOf(stack, ledger.ledgerFunction)).Properties.Environment.Variables;
    expect(env[ENV.tableName]).toEqual(ref(stack, stack.pipeline.table));
    expect(env[ENV.keyPrefix]).toBe('email-pipeline');
  });

  test('may read (GetItem and BatchGetItem only) the idempotency table', () => {
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.ledgerFunction));
    const onIdempotencyTable = statements.filter((s) =>
      asList(s.Resource).some((r) => JSON.stringify(r) === JSON.stringify(arnOf(idOf(stack, stack.pipeline.table)))),
    );
    expect(onIdempotencyTable.flatMap((s) => asList<string>(s.Action)).sort()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
    ]);
  });

  test('may call on the ledger table every DynamoDB operation the ledger store issues', () => {
    // The store's source names its commands: an out-of-order event is written back with PutItem,
    // which DynamoDB Local (no IAM) would never refuse.
    const source = readFileSync(path.join(__dirname, '../../../../../lambdas/runtime/ledger-store.ts'), 'utf8');
    const issued = [...new Set([...source.matchAll(/new (\w+)Command\(/g)].map((m) => `dynamodb:${m[1]}`))].sort();
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.ledgerFunction));
    const onLedgerTable = statements.filter((s) =>
      asList(s.Resource).some((r) => JSON.stringify(r) === JSON.stringify(arnOf(idOf(stack, ledger.table)))),
    );

    expect(issued).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(onLedgerTable.flatMap((s) => asList<string>(s.Action)).sort()).toEqual(issued);
  });

  test('may update ledger items, publish status changes and read its buffer, nothing more', () => {
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.ledgerFunction));
    const actions = statements.flatMap((s) => asList<string>(s.Action)).sort();
    expect(actions).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
        'kms:Decrypt',
        'kms:Decrypt',
        'kms:DescribeKey',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:GenerateDataKey',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        // Whether the status topic has a subscription: the ledger publishes only while it has.
        'sns:GetTopicAttributes',
        'sns:Publish',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
      ].sort(),
    );
    expect(statementsFor(statements, 'dynamodb:UpdateItem')[0].Resource).toEqual(arnOf(idOf(stack, ledger.table)));
    expect(statementsFor(statements, 'sns:Publish')[0].Resource).toEqual(ref(stack, ledger.deliveryStatusTopic));
    const dataKeys = statementsFor(statements, 'kms:GenerateDataKey');
    expect(new Set(dataKeys.map((s) => JSON.stringify(s.Resource)))).toEqual(
      new Set(
        [arnOf(idOf(stack, ledger.topicKey)), arnOf(idOf(stack, stack.pipeline.tableKey!))].map((r) =>
          JSON.stringify(r),
        ),
      ),
    );
    // The table key only through DynamoDB.
    for (const s of dataKeys.filter((d) => JSON.stringify(d.Resource).includes('TableKey'))) {
      expect(s.Condition).toEqual({ StringEquals: { 'kms:ViaService': viaDynamoDb } });
    }
    for (const s of statements) expect(asList(s.Resource)).not.toContain('*');
  });
});

describe('delivery-status topic', () => {
  test('publishers may subscribe; only the ledger function may publish', () => {
    const { template, stack, ledger } = defaults();
    const policy = Object.values(template.findResources('AWS::SNS::TopicPolicy')).find((p) =>
      asList(p.Properties.Topics).some(
        (t) => JSON.stringify(t) === JSON.stringify(ref(stack, ledger.deliveryStatusTopic)),
      ),
    );
    const statements = policy?.Properties.PolicyDocument.Statement as Array<Record<string, any>>;
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Allow', Action: 'sns:Subscribe', Principal: { AWS: expect.anything() } }),
    );
    const deny = statements.find((s) => s.Sid === 'OnlyTheLedgerPublishes');
    expect(deny).toMatchObject({
      Effect: 'Deny',
      Action: 'sns:Publish',
      Principal: { AWS: '*' },
      Condition: { ArnNotEquals: { 'aws:PrincipalArn': arnOf(expect.any(String)) } },
    });
    const roleId = deny?.Condition.ArnNotEquals['aws:PrincipalArn']['Fn::GetAtt'][0];
    expect(resource(template, idOf(stack, ledger.ledgerFunction)).Properties.Role).toEqual(arnOf(roleId));
  });

  test('a listed publisher role may subscribe', () => {
    const { template } = synthesize({
      publisherPrincipals: [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/orders')],
    });
    const subscribe = Object.values(template.findResources('AWS::SNS::TopicPolicy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
      .filter((s) => s.Action === 'sns:Subscribe');
    expect(subscribe).toEqual([
      expect.objectContaining({ Principal: { AWS: 'arn:aws:iam::123456789012:role/orders' } }),
    ]);
  });
});

describe('status function and endpoint', () => {
  test("has a small reserved concurrency, so a flood of lookups cannot take the send functions' concurrency", () => {
    const { template, stack, ledger } = defaults();
    const status = resource(template, idOf(stack, ledger.statusFunction)).Properties;
    expect(status.ReservedConcurrentExecutions).toBe(stack.pipeline.settings.statusReservedConcurrency);
    expect(stack.pipeline.settings.statusReservedConcurrency).toBeGreaterThanOrEqual(1);
    expect(stack.pipeline.settings.statusReservedConcurrency).toBeLessThanOrEqual(10);
    // The send and ledger functions keep the account's unreserved pool (their event sources cap them).
    for (const fn of [stack.pipeline.sendFunction, ledger.ledgerFunction]) {
      expect(resource(template, idOf(stack, fn)).Properties.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  test('statusReservedConcurrency 0 reserves nothing, so an account on the default quota of 10 can deploy', () => {
    const { template, stack } = synthesize({ statusReservedConcurrency: 0 });
    const status = resource(template, idOf(stack, stack.pipeline.ledger.statusFunction)).Properties;
    expect(status.ReservedConcurrentExecutions).toBeUndefined();
    const other = synthesize({ statusReservedConcurrency: 2 });
    expect(
      resource(other.template, idOf(other.stack, other.stack.pipeline.ledger.statusFunction)).Properties
        .ReservedConcurrentExecutions,
    ).toBe(2);
  });

  test('is served on a function URL that requires SigV4 (AWS_IAM)', () => {
    const { template, stack, ledger } = defaults();
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      TargetFunctionArn: arnOf(idOf(stack, ledger.statusFunction)),
    });
  });

  test('reads both tables with the idempotency key prefix of the send function', () => {
    const { template, stack, ledger } = defaults();
    const env = resource(template, idOf(stack, ledger.statusFunction)).Properties.Environment.Variables;
    expect(env).toMatchObject({
      [LEDGER_ENV.tableName]: ref(stack, ledger.table),
      [ENV.tableName]: ref(stack, stack.pipeline.table),
      [ENV.keyPrefix]: 'email-pipeline',
    });
  });

  test('may GetItem on both tables and nothing else (and its logs): it cannot cancel, whatever event it is given', () => {
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.statusFunction));
    const actions = statements.flatMap((s) => asList<string>(s.Action)).sort();
    expect(actions).toEqual([
      'dynamodb:GetItem',
      'kms:Decrypt',
      'kms:DescribeKey',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    const [key] = statementsFor(statements, 'kms:Decrypt');
    expect(key?.Resource).toEqual(arnOf(idOf(stack, stack.pipeline.tableKey!)));
    expect(key?.Condition).toEqual({ StringEquals: { 'kms:ViaService': viaDynamoDb } });
    const reads = statementsFor(statements, 'dynamodb:GetItem').flatMap((s) => asList(s.Resource));
    expect(new Set(reads.map((r) => JSON.stringify(r)))).toEqual(
      new Set(
        [arnOf(idOf(stack, ledger.table)), arnOf(idOf(stack, stack.pipeline.table))].map((r) => JSON.stringify(r)),
      ),
    );
  });

  test('the cancel function is least privilege: PutItem of the cancel mark on the idempotency table, UpdateItem of the Cancelled event on the ledger, each limited to the attributes it writes, nothing returned', async () => {
    const { template, stack, ledger } = defaults();
    const statements = functionPolicyStatements(template, idOf(stack, ledger.cancelFunction));
    expect(statements.flatMap((st) => asList<string>(st.Action)).sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'kms:Decrypt',
      'kms:DescribeKey',
      'kms:Encrypt',
      'kms:GenerateDataKey',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    const [put, ...morePuts] = statementsFor(statements, 'dynamodb:PutItem');
    const [update, ...moreUpdates] = statementsFor(statements, 'dynamodb:UpdateItem');
    expect([morePuts, moreUpdates]).toEqual([[], []]);
    expect(asList(put?.Action)).toEqual(['dynamodb:PutItem']);
    expect(put?.Resource).toEqual(arnOf(idOf(stack, stack.pipeline.table)));
    expect(put?.Condition).toEqual({
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['id', 'status', 'expiration', 'data', 'ledgerKey'] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    });
    expect(asList(update?.Action)).toEqual(['dynamodb:UpdateItem']);
    expect(update?.Resource).toEqual(arnOf(idOf(stack, ledger.table)));
    expect(update?.Condition['ForAllValues:StringEquals']['dynamodb:Attributes']).toEqual([...CANCEL_WRITES.ledger]);
    // What the ledger write touches is exactly the item's fields, its place in the index by outcome and
    // its bookkeeping: the attributes the `Cancelled` write itself names.
    const sent: UpdateItemCommand[] = [];
    await recordPipelineEvent(
      { send: async (command: UpdateItemCommand) => (sent.push(command), {}) } as never,
      'ledger',
      'order-1',
      { type: 'Cancelled', at: '2026-12-03T10:00:00.000Z', detail: 'by ops' },
      { status: 'cancelled', over: ['scheduled'] },
      3600,
      // A team's cancel: it names the key's team too.
      { team: 'billing', teamKey: 'order-1' },
    );
    const written = [
      ...Object.keys(sent[0]!.input.Key ?? {}),
      ...Object.values(sent[0]!.input.ExpressionAttributeNames ?? {}),
    ];
    expect([...CANCEL_WRITES.ledger].sort()).toEqual([...new Set(written)].sort());
    expect([...CANCEL_WRITES.ledger].sort()).toEqual(
      [
        LEDGER_TABLE.partitionKey,
        'events',
        'status',
        'updatedAt',
        LEDGER_TABLE.ttlAttribute,
        LEDGER_STATUS_INDEX.partitionKey,
        // Every bookkeeping attribute but the bound attempts, which only SES's Send events write: a name
        // added to the kernel's LEDGER_INTERNAL is granted to the cancel function, or left out here on purpose.
        ...Object.values(LEDGER_INTERNAL).filter((name) => name !== LEDGER_INTERNAL.boundAttempts),
        // A team's key's team (deliveries --team), where the item names none yet.
        LEDGER_TEAM.team,
        LEDGER_TEAM.teamKey,
      ].sort(),
    );
    for (const denied of ['dynamodb:DeleteItem', 'dynamodb:Scan', 'dynamodb:Query', 'dynamodb:BatchWriteItem']) {
      expect(statementsFor(statements, denied)).toEqual([]);
    }
  });

  test('the cancel function knows the dedupe window, which a cancel mark lasts, and the tables', () => {
    const { template, stack, ledger } = defaults();
    const env = resource(template, idOf(stack, ledger.cancelFunction)).Properties.Environment.Variables;
    expect(env).toMatchObject({
      [ENV.dedupeWindowSeconds]: String(stack.pipeline.settings.dedupeWindowSeconds),
      [LEDGER_ENV.tableName]: ref(stack, ledger.table),
      [ENV.tableName]: ref(stack, stack.pipeline.table),
    });
  });

  test('cancel has a function URL of its own (AWS_IAM) on a function of its own, with a small reserved concurrency', () => {
    const { template, stack, ledger } = defaults();
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      TargetFunctionArn: arnOf(idOf(stack, ledger.cancelFunction)),
    });
    expect(idOf(stack, ledger.cancelFunction)).not.toBe(idOf(stack, ledger.statusFunction));
    const fn = resource(template, idOf(stack, ledger.cancelFunction)).Properties;
    expect(fn.ReservedConcurrentExecutions).toBe(LEDGER_FUNCTIONS.cancelReservedConcurrency);
    expect(fn.Handler).toBe('index.handler');
  });

  test('an outsider cannot cancel: both URLs stay AWS_IAM and no resource policy lets anyone invoke either function', () => {
    const { template, stack, ledger } = defaults();
    const urls = Object.values(template.findResources('AWS::Lambda::Url'));
    expect(urls).toHaveLength(2);
    expect(urls.map((u) => u.Properties.AuthType)).toEqual(['AWS_IAM', 'AWS_IAM']);
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter((p) =>
      [ledger.statusFunction, ledger.cancelFunction].some((fn) =>
        JSON.stringify(p.Properties.FunctionName).includes(idOf(stack, fn)),
      ),
    );
    expect(permissions).toEqual([]);
  });

  test('nobody may cancel by default: no policy grants the cancel function or its URL', () => {
    const { template, stack, ledger } = defaults();
    const cancelId = idOf(stack, ledger.cancelFunction);
    const granting = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      (p.Properties.PolicyDocument.Statement as Array<Record<string, any>>).some(
        (st) =>
          asList<string>(st.Action).some((a) => a.startsWith('lambda:')) &&
          JSON.stringify(st.Resource).includes(cancelId),
      ),
    );
    expect(granting).toEqual([]);
  });

  test('cancelPrincipals and grantCancel grant the cancel URL to them alone (via the URL only); a reader gets the status URL only', () => {
    const alice = 'arn:aws:iam::123456789012:user/alice';
    const { template, stack } = synthesize({ cancelPrincipals: [new iam.ArnPrincipal(alice)] }, (stack) => {
      const canceller = new iam.Role(stack, 'Canceller', { assumedBy: new iam.AccountRootPrincipal() });
      const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantCancel(canceller);
      stack.pipeline.ledger.grantStatusRead(reader);
    });
    const { ledger } = stack.pipeline;
    const cancelId = idOf(stack, ledger.cancelFunction);
    const statusId = idOf(stack, ledger.statusFunction);
    /** The roles whose policies grant a lambda: action on `functionId`, and those statements. */
    const grantsOn = (functionId: string) =>
      Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
        (p.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
          .filter(
            (st) =>
              asList<string>(st.Action).some((a) => a.startsWith('lambda:')) &&
              JSON.stringify(st.Resource).includes(functionId),
          )
          .map((st) => ({ roles: JSON.stringify(p.Properties.Roles), statement: st })),
      );
    const onCancel = grantsOn(cancelId);
    expect(onCancel.map((g) => g.roles)).toEqual(onCancel.map(() => expect.stringContaining('Canceller')));
    expect(onCancel.map((g) => g.statement)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 'lambda:InvokeFunctionUrl',
          Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
        }),
        // A direct Invoke is granted only as the URL makes it, never with a hand-written event.
        expect.objectContaining({
          Action: 'lambda:InvokeFunction',
          Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
        }),
      ]),
    );
    expect(onCancel.every((g) => g.statement.Action !== 'lambda:InvokeFunction' || g.statement.Condition)).toBe(true);
    // The reader reads, as the canceller does.
    const readers = grantsOn(statusId).map((g) => g.roles);
    expect(readers.some((roles) => roles.includes('Reader'))).toBe(true);
    expect(readers.some((roles) => roles.includes('Canceller'))).toBe(true);
    // The user, named by ARN, reaches the cancel URL by the function's own policy, through the URL only.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter((p) =>
      JSON.stringify(p.Properties.FunctionName).includes(cancelId),
    );
    expect(permissions.map((p) => [p.Properties.Action, p.Properties.Principal])).toEqual(
      expect.arrayContaining([['lambda:InvokeFunctionUrl', alice]]),
    );
    for (const permission of permissions) {
      expect(permission.Properties.Principal).toBe(alice);
      if (permission.Properties.Action === 'lambda:InvokeFunctionUrl') {
        expect(permission.Properties.FunctionUrlAuthType).toBe('AWS_IAM');
      } else {
        expect(permission.Properties.InvokedViaFunctionUrl).toBe(true);
      }
    }
  });

  test('a cancel principal must be a role or a user: an account is refused at synth', () => {
    expect(() => synthesize({ cancelPrincipals: [new iam.AccountPrincipal('123456789012')] })).toThrow(
      /cancelPrincipals.*role or a user/,
    );
  });

  test('only principals granted the status URL may invoke it: grantStatusRead names them (and never the cancel URL)', () => {
    const { template } = synthesize({}, (stack) => {
      const caller = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.ledger.grantStatusRead(caller);
    });
    const invokers = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('lambda:InvokeFunctionUrl'),
    );
    expect(invokers.map((p) => JSON.stringify(p.Properties.Roles))).toEqual([expect.stringContaining('Caller')]);
  });

  test('grantStatusRead gives a caller InvokeFunctionUrl (AWS_IAM) and the InvokeFunction it implies', () => {
    const { template } = synthesize({}, (stack) => {
      const caller = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.ledger.grantStatusRead(caller);
    });
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes('Caller'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 'lambda:InvokeFunctionUrl',
        Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 'lambda:InvokeFunction',
        Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': true } },
      }),
    );
  });
});

describe('stack outputs of the ledger', () => {
  test('give the status URL, the delivery-status topic, the ledger table and the key prefix', () => {
    const { template, stack, ledger } = defaults();
    const outputs = template.toJSON().Outputs;
    expect(JSON.stringify(outputs.StatusUrl.Value)).toContain(idOf(stack, ledger.statusUrl));
    expect(JSON.stringify(outputs.StatusUrl.Value)).toContain('deliveries/');
    expect(JSON.stringify(outputs.CancelUrl.Value)).toContain(idOf(stack, ledger.cancelUrl));
    expect(JSON.stringify(outputs.CancelUrl.Value)).toContain('deliveries/');
    expect(outputs.DeliveryStatusTopicArn.Value).toEqual(ref(stack, ledger.deliveryStatusTopic));
    expect(outputs.LedgerTableName.Value).toEqual(ref(stack, ledger.table));
    expect(outputs.IdempotencyKeyPrefix.Value).toBe('email-pipeline');
  });

  test('give the ledger buffer and its DLQ and the subscription DLQ (email-pipeline dlq --queue)', () => {
    const { template, stack, ledger } = defaults();
    const outputs = template.toJSON().Outputs;
    expect(outputs.LedgerBufferQueueUrl.Value).toEqual(ref(stack, ledger.bufferQueue));
    expect(outputs.LedgerDeadLetterQueueUrl.Value).toEqual(ref(stack, ledger.bufferDeadLetterQueue));
    expect(outputs.SubscriptionDeadLetterQueueUrl.Value).toEqual(
      ref(stack, stack.pipeline.subscriptionDeadLetterQueue),
    );
  });
});
