import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { ENV, LEDGER_ENV } from '../../../../lambdas/kernel/environment';
import { BUNDLING } from '../../../../lib/construct/bundling';
import { DLQ_RETENTION, RUNTIME } from '../../../../lib';
import { arnOf, resource, synthDefault, synthesize } from '../../helpers';

describe('topic and queues', () => {
  test('the topic delivers to the queue with raw message delivery off', () => {
    const { template, ids } = synthDefault();
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      TopicArn: { Ref: ids.topic },
      Endpoint: arnOf(ids.queue),
      RawMessageDelivery: false,
    });
  });

  test('the queue redrives to the DLQ after maxReceiveCount receives', () => {
    const { template, ids } = synthesize({ maxReceiveCount: 7 });
    expect(resource(template, ids.queue).Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(ids.deadLetterQueue),
      maxReceiveCount: 7,
    });
  });

  test('the queue takes visibility timeout and retention from the settings', () => {
    const { template, ids } = synthesize({ visibilityTimeoutSeconds: 400, retentionPeriodSeconds: 86_400 });
    expect(resource(template, ids.queue).Properties).toMatchObject({
      VisibilityTimeout: 400,
      MessageRetentionPeriod: 86_400,
    });
  });

  test('the DLQ keeps messages for 14 days', () => {
    const { template, ids } = synthDefault();
    expect(resource(template, ids.deadLetterQueue).Properties.MessageRetentionPeriod).toBe(DLQ_RETENTION.toSeconds());
    expect(DLQ_RETENTION.toSeconds()).toBe(14 * 24 * 60 * 60);
  });

  test('the queue visibility timeout is at least 6 x the function timeout', () => {
    const { template, ids } = synthesize({ functionTimeoutSeconds: 45 });
    const visibility = resource(template, ids.queue).Properties.VisibilityTimeout;
    const timeout = resource(template, ids.function).Properties.Timeout;
    expect(timeout).toBe(45);
    expect(visibility).toBeGreaterThanOrEqual(6 * timeout);
  });
});

describe('idempotency table', () => {
  test('has partition key id (string) and TTL on the Powertools expiry attribute', () => {
    const { template, ids } = synthDefault();
    expect(resource(template, ids.table).Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    });
  });

  test('bills on demand', () => {
    const { template, ids } = synthDefault();
    const props = resource(template, ids.table).Properties;
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.ProvisionedThroughput).toBeUndefined();
  });

  test('has point-in-time recovery and server-side encryption', () => {
    const { template, ids } = synthDefault();
    expect(resource(template, ids.table).Properties).toMatchObject({
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  test('is retained and deletion-protected by default', () => {
    const { template, ids } = synthDefault();
    const table = resource(template, ids.table);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
  });
});

describe('function', () => {
  test('runs nodejs24.x on arm64, and the esbuild target matches the runtime', () => {
    const { template, ids } = synthDefault();
    expect(resource(template, ids.function).Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
    });
    expect(RUNTIME.name).toBe('nodejs24.x');
    expect(BUNDLING.target).toBe('node24');
  });

  test('takes timeout and memory from the settings', () => {
    const { template, ids } = synthesize({ functionTimeoutSeconds: 20, memorySizeMb: 512 });
    expect(resource(template, ids.function).Properties).toMatchObject({ Timeout: 20, MemorySize: 512 });
  });

  test('gets every handler setting and the Powertools settings as environment variables', () => {
    const { template, ids, stack } = synthesize({
      failOpen: true,
      logLevel: 'DEBUG',
      metricsNamespace: 'Mail',
      dedupeWindowSeconds: 2_000_000,
      maxReceiveCount: 6,
    });
    const vars = resource(template, ids.function).Properties.Environment.Variables;
    const ledger = (c: IConstruct) => ({ Ref: stack.getLogicalId(c.node.defaultChild as CfnResource) });
    expect(vars).toEqual({
      [ENV.senderAddress]: 'noreply@example.com',
      [ENV.topicArn]: { Ref: ids.topic },
      [ENV.highPriorityTopicArn]: { Ref: ids.highPriorityTopic },
      [ENV.tableName]: { Ref: ids.table },
      [ENV.keyPrefix]: 'email-pipeline',
      [ENV.dedupeWindowSeconds]: '2000000',
      [ENV.sourceQueueUrl]: { Ref: ids.queue },
      [ENV.scheduleQueueUrl]: {
        Ref: stack.getLogicalId(stack.pipeline.scheduleQueue.node.defaultChild as CfnResource),
      },
      [ENV.deadLetterQueueUrl]: { Ref: ids.deadLetterQueue },
      [ENV.maxReceiveCount]: '6',
      [ENV.failOpen]: 'true',
      [ENV.retryBudgetSeconds]: '86400',
      [ENV.maxScheduleAheadSeconds]: '86400',
      [ENV.maxSendRate]: '14',
      [ENV.maxConcurrency]: '10',
      [ENV.sesTimeoutMs]: '5000',
      [ENV.retryBaseSeconds]: '2',
      [ENV.retryCapSeconds]: '300',
      [ENV.systemicRetrySeconds]: '300',
      [ENV.highPriorityQueueUrl]: { Ref: ids.highPriorityQueue },
      [ENV.highPriorityRateShare]: '20',
      [ENV.configurationSetName]: ledger(stack.pipeline.ledger.configurationSet!),
      [LEDGER_ENV.tableName]: ledger(stack.pipeline.ledger.table),
      [LEDGER_ENV.sendConfirmationGraceSeconds]: '300',
      [ENV.attachmentsBucketName]: ledger(stack.pipeline.attachmentsBucket),
      POWERTOOLS_SERVICE_NAME: 'email-pipeline',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      POWERTOOLS_METRICS_NAMESPACE: 'Mail',
      NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=16',
    });
    // Every name the handler reads is set, except the optional sender name (the configuration set is the ledger's own).
    const missing = Object.values(ENV).filter((name) => !(name in vars));
    expect(missing).toEqual([ENV.senderName]);
  });

  test('senderName reaches the function as SENDER_NAME', () => {
    const { template, ids } = synthesize({ senderName: 'Example Shop' });
    expect(resource(template, ids.function).Properties.Environment.Variables[ENV.senderName]).toBe('Example Shop');
  });

  test('passes the backoff options to the handler', () => {
    const { template, ids } = synthesize({ retryBaseSeconds: 5, systemicRetrySeconds: 900, retryCapSeconds: 600 });
    expect(resource(template, ids.function).Properties.Environment.Variables).toMatchObject({
      [ENV.retryBaseSeconds]: '5',
      [ENV.systemicRetrySeconds]: '900',
      [ENV.retryCapSeconds]: '600',
    });
  });

  test('sets SES_CONFIGURATION_SET only when a configuration set is configured', () => {
    const { template, ids } = synthesize({ configurationSetName: 'transactional' });
    const vars = resource(template, ids.function).Properties.Environment.Variables;
    expect(vars[ENV.configurationSetName]).toBe('transactional');
  });

  test('logs to its own log group with the configured retention', () => {
    const { template, ids } = synthesize({ logRetentionDays: 90 });
    expect(resource(template, ids.logGroup).Properties.RetentionInDays).toBe(90);
    expect(resource(template, ids.function).Properties.LoggingConfig).toEqual({ LogGroup: { Ref: ids.logGroup } });
  });
});

describe('event source mapping', () => {
  test('reports batch item failures and takes batch size, window and concurrency from the settings', () => {
    const { template, ids } = synthesize({ batchSize: 25, maxBatchingWindowSeconds: 3, maxConcurrency: 4 });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(ids.queue),
      FunctionName: { Ref: ids.function },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 25,
      MaximumBatchingWindowInSeconds: 3,
      ScalingConfig: { MaximumConcurrency: 4 },
    });
  });
});

describe('stack outputs', () => {
  /** The send ledger's outputs (their values are checked in ledger/send-ledger.test.ts). */
  const LEDGER_OUTPUTS = ['DeliveryStatusTopicArn', 'IdempotencyKeyPrefix', 'LedgerTableName', 'StatusUrl'];
  /** Every output but the alarm topic's. */
  const PIPELINE_OUTPUTS = [
    'AttachmentsBucketName',
    'CancelUrl',
    'DeadLetterQueueUrl',
    'FunctionName',
    'LedgerBufferQueueUrl',
    'LedgerDeadLetterQueueUrl',
    // The ledger function's disabled mapping of the ledger DLQ (dlq redrive --queue ledger enables it).
    'LedgerDeadLetterMappingId',
    'SubscriptionDeadLetterQueueUrl',
    'QueueUrl',
    'RedriveRoleArn',
    'TableName',
    'TopicArn',
    'HighPriorityQueueUrl',
    'HighPriorityTopicArn',
    'LedgerFunctionName',
    'ConfigurationSetName',
    'MaxScheduleAheadSeconds',
    // Where the functions log (the saved Logs Insights queries read these).
    'SendLogGroupName',
    'LedgerLogGroupName',
    'StatusLogGroupName',
    ...LEDGER_OUTPUTS,
  ];

  test('exist with the exact names', () => {
    const { template, ids } = synthDefault();
    const outputs = template.toJSON().Outputs;
    // Beside the flat outputs, the pipeline's and the monitoring's endpoints objects (pipeline/endpoints.test.ts reads them).
    const named = Object.keys(outputs).filter((name) => !/^(Pipeline|Monitoring)Endpoints[0-9A-F]{8}$/.test(name));
    expect(Object.keys(outputs).length - named.length).toBe(2);
    expect(named.sort()).toEqual(['AlarmTopicArn', 'WarningTopicArn', ...PIPELINE_OUTPUTS].sort());
    template.hasOutput('TopicArn', { Value: { Ref: ids.topic } });
    template.hasOutput('QueueUrl', { Value: { Ref: ids.queue } });
    template.hasOutput('DeadLetterQueueUrl', { Value: { Ref: ids.deadLetterQueue } });
    template.hasOutput('TableName', { Value: { Ref: ids.table } });
    template.hasOutput('FunctionName', { Value: { Ref: ids.function } });
  });

  test('without monitoring there is no alarm or warning topic output', () => {
    const outputs = synthesize({}, undefined, { monitoring: false }).template.toJSON().Outputs;
    const named = Object.keys(outputs).filter((name) => !/^PipelineEndpoints[0-9A-F]{8}$/.test(name));
    expect(Object.keys(outputs).length - named.length).toBe(1);
    expect(named.sort()).toEqual([...PIPELINE_OUTPUTS].sort());
  });
});
