/**
 * The callbacks on AWS, template by template: nothing of them without a callback; with callbacks,
 * the table, the queue and its DLQ, a raw subscription per callback filtered as the local
 * pipeline's, a generated signing secret per callback, the function and its mapping, its role
 * (exactly what its code calls), and the `Endpoints` output's `Callbacks` and teams' secrets.
 */
import { RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { CALLBACK_ENV, CALLBACKS_QUEUE, callbackFilterPolicy } from '../../../../../lambdas/kernel/callbacks/names';
import { DLQ_RETENTION_SECONDS } from '../../../../../lib/settings';
import {
  CALLBACK_PROPS,
  arnOf,
  functionPolicyStatements,
  resource,
  synthDefault,
  synthesize,
  type Synthesized,
} from '../../../helpers';

const id = (s: Synthesized, c: { node: { defaultChild?: unknown } }) =>
  s.stack.getLogicalId(c.node.defaultChild as CfnResource);

/** The pipeline's `Endpoints` output as JSON, each Ref as `ref:<id>` and each GetAtt as `att:<id>.<attribute>`. */
function endpoints(template: Template): Record<string, any> {
  const [output] = Object.entries(template.findOutputs('*'))
    .filter(([name]) => name.startsWith('PipelineEndpoints'))
    .map(([, o]) => o);
  const join = (output?.Value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const text = join[1]
    .map((part: any) =>
      typeof part === 'string' ? part : part.Ref ? `ref:${part.Ref}` : `att:${part['Fn::GetAtt'].join('.')}`,
    )
    .join('');
  return JSON.parse(text) as Record<string, any>;
}

describe('without a callback', () => {
  test('nothing of the callbacks is made: no secret, table, queue, function or output of theirs', () => {
    const s = synthDefault();
    expect(s.stack.pipeline.callbacks).toBeUndefined();
    expect(s.template.findResources('AWS::SecretsManager::Secret')).toEqual({});
    expect(Object.keys(s.template.toJSON().Resources).filter((k) => /Callback/i.test(k))).toEqual([]);
    const functions = Object.values(s.template.findResources('AWS::Lambda::Function'));
    expect(functions.some((f) => f.Properties.Environment?.Variables?.[CALLBACK_ENV.targets] !== undefined)).toBe(
      false,
    );
    expect(endpoints(s.template)).not.toHaveProperty('Callbacks');
    expect(s.stack.pipeline.logGroupNames).not.toHaveProperty('callbacks');
  });
});

describe('with callbacks', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(CALLBACK_PROPS);
  });
  const callbacks = () => s.stack.pipeline.callbacks!;

  test('the callbacks table: key + id, TTL, the by-day index (keys only), on demand, PITR, the tables’ key', () => {
    const table = resource(s.template, id(s, callbacks().table)).Properties;
    expect(table.KeySchema).toEqual([
      { AttributeName: 'key', KeyType: 'HASH' },
      { AttributeName: 'id', KeyType: 'RANGE' },
    ]);
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiration', Enabled: true });
    expect(table.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'by-day',
        KeySchema: [
          { AttributeName: 'day', KeyType: 'HASH' },
          { AttributeName: 'at', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.SSESpecification).toEqual({
      SSEEnabled: true,
      SSEType: 'KMS',
      KMSMasterKeyId: arnOf(id(s, s.stack.pipeline.tableKey!)),
    });
    expect(table.DeletionProtectionEnabled).toBe(true);
  });

  test('the callbacks queue: 4 days, visibility 6 × the function timeout, 100 receives to its DLQ (14 days), its own key', () => {
    const queue = resource(s.template, id(s, callbacks().queue)).Properties;
    const dlqId = id(s, callbacks().deadLetterQueue);
    const keyArn = arnOf(id(s, callbacks().queueKey));
    expect(queue.MessageRetentionPeriod).toBe(CALLBACKS_QUEUE.retentionSeconds);
    expect(queue.VisibilityTimeout).toBe(360);
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(dlqId), maxReceiveCount: 100 });
    expect(queue.KmsMasterKeyId).toEqual(keyArn);
    const dlq = resource(s.template, dlqId).Properties;
    expect(dlq.MessageRetentionPeriod).toBe(DLQ_RETENTION_SECONDS);
    expect(dlq.KmsMasterKeyId).toEqual(keyArn);
    expect(dlq.RedriveAllowPolicy.redrivePermission).toBe('byQueue');
    expect(JSON.stringify(dlq.RedriveAllowPolicy.sourceQueueArns)).toContain(queue.QueueName);
    expect(resource(s.template, id(s, callbacks().queueKey)).Properties.EnableKeyRotation).toBe(true);
  });

  test('both queues refuse requests without TLS', () => {
    for (const queue of [callbacks().queue, callbacks().deadLetterQueue]) {
      const policy = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')).find((p) =>
        p.Properties.Queues.some((q: { Ref: string }) => q.Ref === id(s, queue)),
      );
      expect(policy?.Properties.PolicyDocument.Statement).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      );
    }
  });

  test('one raw subscription of the queue to the delivery-status topic, filtered on the teams with a callback', () => {
    const topic = id(s, s.stack.pipeline.ledger.deliveryStatusTopic);
    const subscriptions = Object.values(s.template.findResources('AWS::SNS::Subscription')).filter(
      (r) => r.Properties.TopicArn.Ref === topic,
    );
    expect(subscriptions.map((r) => r.Properties)).toEqual([
      {
        Protocol: 'sqs',
        TopicArn: { Ref: topic },
        Endpoint: arnOf(id(s, callbacks().queue)),
        RawMessageDelivery: true,
        FilterPolicy: callbackFilterPolicy(['*', 'billing']),
        RedrivePolicy: { deadLetterTargetArn: arnOf(id(s, callbacks().deadLetterQueue)) },
      },
    ]);
    // Keys without a team, and billing's; not support's, which has no callback.
    expect(callbackFilterPolicy(['*', 'billing'])).toEqual({
      $or: [{ team: [{ exists: false }] }, { team: ['billing'] }],
    });
  });

  test('SNS may use the queues’ key for the delivery-status topic only', () => {
    const key = resource(s.template, id(s, callbacks().queueKey)).Properties;
    const forSns = key.KeyPolicy.Statement.filter(
      (st: Record<string, any>) => st.Principal?.Service === 'sns.amazonaws.com',
    );
    expect(forSns).toEqual([
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
        Condition: { ArnEquals: { 'aws:SourceArn': { Ref: id(s, s.stack.pipeline.ledger.deliveryStatusTopic) } } },
      }),
    ]);
  });

  test('a signing secret per callback, its key generated by CloudFormation (40 letters and digits), how to rotate it said', () => {
    const secrets = Object.values(s.template.findResources('AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(2);
    for (const secret of secrets) {
      expect(secret.Properties.GenerateSecretString).toEqual({
        SecretStringTemplate: '{}',
        GenerateStringKey: 'key',
        PasswordLength: 40,
        ExcludePunctuation: true,
        IncludeSpace: false,
      });
      expect(secret.Properties.SecretString).toBeUndefined();
      expect(secret.Properties.Description).toMatch(/"previousKey".*remove "previousKey"/);
      expect(secret.DeletionPolicy).toBe('Retain');
    }
    expect(Object.keys(callbacks().signingSecrets).sort()).toEqual(['*', 'billing']);
    expect(callbacks().signingSecret()).toBe(callbacks().signingSecrets['*']);
    expect(callbacks().signingSecret('support')).toBeUndefined();
  });

  test('the function: its bundle, nodejs24.x on arm64, 256 MB, 60 s, its own log group and its targets by secret ARN', () => {
    const fn = resource(s.template, id(s, callbacks().callbackFunction)).Properties;
    expect(fn).toMatchObject({
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 60,
      LoggingConfig: { LogGroup: { Ref: id(s, callbacks().logGroup) } },
    });
    const env = fn.Environment.Variables;
    expect(env.NODE_OPTIONS).toBe('--enable-source-maps --max-semi-space-size=8');
    expect(env[CALLBACK_ENV.tableName]).toEqual({ Ref: id(s, callbacks().table) });
    expect(env[CALLBACK_ENV.queueUrl]).toEqual({ Ref: id(s, callbacks().queue) });
    expect(env[CALLBACK_ENV.deadLetterQueueUrl]).toEqual({ Ref: id(s, callbacks().deadLetterQueue) });
    expect(env[CALLBACK_ENV.retryBaseSeconds]).toBe('30');
    expect(env[CALLBACK_ENV.retryWindowSeconds]).toBe('86400');
    expect(env).not.toHaveProperty(CALLBACK_ENV.allowPrivateAddresses);
    const targets = JSON.stringify(env[CALLBACK_ENV.targets]);
    for (const secret of Object.values(callbacks().signingSecrets)) expect(targets).toContain(id(s, secret));
    expect(targets).toContain('https://billing.example.com/hooks');
    expect(targets).not.toContain('"secret\\"');
    const logs = resource(s.template, id(s, callbacks().logGroup)).Properties;
    expect(logs.LogGroupName).toBe(s.stack.pipeline.logGroupNames.callbacks);
    expect(logs.KmsKeyId).toEqual(arnOf(id(s, s.stack.pipeline.logsKey!)));
    // The logs key admits CloudWatch Logs for this group too.
    const key = resource(s.template, id(s, s.stack.pipeline.logsKey!)).Properties;
    expect(JSON.stringify(key.KeyPolicy)).toContain(`log-group:${s.stack.pipeline.logGroupNames.callbacks}`);
  });

  test('its mapping of the callbacks queue: batches of 10, partial batch responses, 5 at most at once', () => {
    const mappings = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => m.Properties.FunctionName.Ref === id(s, callbacks().callbackFunction),
    );
    expect(mappings.map((m) => m.Properties)).toEqual([
      expect.objectContaining({
        EventSourceArn: arnOf(id(s, callbacks().queue)),
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 5 },
      }),
    ]);
  });

  test('its role allows exactly: the queue, the DLQ, the table, its secrets, the keys and its logs', () => {
    const statements = functionPolicyStatements(s.template, id(s, callbacks().callbackFunction));
    const by = (action: string) =>
      statements.filter((st) => st.Effect === 'Allow' && ([] as string[]).concat(st.Action).includes(action));
    const resources = (action: string) => by(action).flatMap((st) => ([] as unknown[]).concat(st.Resource));
    expect(new Set(statements.flatMap((st) => ([] as string[]).concat(st.Action)))).toEqual(
      new Set([
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueUrl',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:SendMessage',
        'kms:Decrypt',
        'kms:GenerateDataKey',
        'kms:DescribeKey',
        'kms:Encrypt',
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'dynamodb:PutItem',
        'secretsmanager:GetSecretValue',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
      ]),
    );
    expect(resources('sqs:ReceiveMessage')).toEqual([arnOf(id(s, callbacks().queue))]);
    expect(resources('sqs:SendMessage')).toEqual([arnOf(id(s, callbacks().deadLetterQueue))]);
    expect(resources('secretsmanager:GetSecretValue')).toEqual(
      Object.values(callbacks().signingSecrets).map((secret) => ({ Ref: id(s, secret) })),
    );
    for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem']) {
      expect(resources(action)).toEqual([arnOf(id(s, callbacks().table))]);
    }
    expect(statements.every((st) => st.Effect === 'Allow')).toBe(true);
  });

  test('the redrive role may list, redrive and purge the callbacks DLQ, send to the callbacks queue and read its history', () => {
    const role = id(s, s.stack.pipeline.redriveRole);
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy'))
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    const sid = (name: string) => statements.find((st) => st.Sid === name);
    expect(sid('ListRedrivePurgeCallbackDeadLetters')?.Resource).toEqual(arnOf(id(s, callbacks().deadLetterQueue)));
    expect(sid('ListRedrivePurgeCallbackDeadLetters')?.Action).toContain('sqs:StartMessageMoveTask');
    expect(sid('RedriveToTheCallbacksQueue')).toMatchObject({
      Action: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
      Resource: arnOf(id(s, callbacks().queue)),
    });
    expect(sid('ReadAndWriteCallbackMessages')?.Resource).toEqual(arnOf(id(s, callbacks().queueKey)));
    // callbacks list --history and replay read the table and its index; enable deletes a team's state.
    const tableArn = arnOf(id(s, callbacks().table));
    expect(sid('CallbackHistoryAndState')).toMatchObject({
      Action: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
      Resource: [tableArn, { 'Fn::Join': ['', [tableArn, '/index/by-day']] }],
    });
    expect(sid('UseCallbacksTableKey')?.Condition).toEqual({
      StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
    });
  });

  test('Endpoints: Callbacks with the queue, DLQ, table, function, log group and the pipeline’s secret; a team’s secret in Teams', () => {
    const values = endpoints(s.template);
    expect(values.Callbacks).toEqual({
      QueueUrl: `ref:${id(s, callbacks().queue)}`,
      DeadLetterQueueUrl: `ref:${id(s, callbacks().deadLetterQueue)}`,
      TableName: `ref:${id(s, callbacks().table)}`,
      FunctionName: `ref:${id(s, callbacks().callbackFunction)}`,
      LogGroupName: s.stack.pipeline.logGroupNames.callbacks,
      SigningSecretArn: `ref:${id(s, callbacks().signingSecrets['*']!)}`,
    });
    expect(values.Teams.billing.CallbackSigningSecretArn).toBe(`ref:${id(s, callbacks().signingSecrets.billing!)}`);
    expect(values.Teams.support).not.toHaveProperty('CallbackSigningSecretArn');
  });

  test('a team’s callback alone: no SigningSecretArn of the pipeline’s own', () => {
    const teamOnly = synthesize({ teams: CALLBACK_PROPS.teams });
    const values = endpoints(teamOnly.template);
    expect(values.Callbacks).not.toHaveProperty('SigningSecretArn');
    expect(values.Teams.billing).toHaveProperty('CallbackSigningSecretArn');
    expect(teamOnly.template.findResources('AWS::SecretsManager::Secret')).not.toEqual({});
    const subscription = Object.values(teamOnly.template.findResources('AWS::SNS::Subscription')).filter(
      (r) => r.Properties.RawMessageDelivery === true,
    );
    expect(subscription.map((r) => r.Properties.FilterPolicy)).toEqual([{ team: ['billing'] }]);
  });

  test('with removalPolicy DESTROY the secrets and the table go with the stack', () => {
    const destroyed = synthesize({ ...CALLBACK_PROPS, removalPolicy: RemovalPolicy.DESTROY });
    const c = destroyed.stack.pipeline.callbacks!;
    for (const part of [...Object.values(c.signingSecrets), c.table]) {
      expect(resource(destroyed.template, id(destroyed, part)).DeletionPolicy).toBe('Delete');
    }
    expect(resource(destroyed.template, id(destroyed, c.table)).Properties.DeletionProtectionEnabled).toBe(false);
  });
});
