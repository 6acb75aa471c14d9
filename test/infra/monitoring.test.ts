import { SettingsError } from '../../lib/settings';
import { CfnResource } from 'aws-cdk-lib';
import {
  DEFAULT_ALARMS,
  HANDLER_METRICS,
  LEDGER_METRICS,
  PipelineAlarmsProps,
} from '../../lib/construct/monitoring/monitoring';
import { flattenJoin, synthDefault, synthesize, Synthesized } from './helpers';

type Alarm = { Properties: Record<string, any> };

function alarms(s: Synthesized): Alarm[] {
  return Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Alarm[];
}

function alarmOn(s: Synthesized, namespace: string, metricName: string, dimensions?: unknown): Alarm {
  const found = alarms(s).filter(
    (a) =>
      a.Properties.Namespace === namespace &&
      a.Properties.MetricName === metricName &&
      (dimensions === undefined || JSON.stringify(a.Properties.Dimensions) === JSON.stringify(dimensions)),
  );
  expect(found).toHaveLength(1);
  return found[0];
}

function alarmTopicId(s: Synthesized): string {
  const topic = s.stack.monitoring!.alarmTopic;
  return s.stack.resolve(topic.topicArn).Ref;
}

const cases: Array<{
  name: keyof PipelineAlarmsProps;
  namespace: string;
  metric: string;
  statistic: string;
  dimensions: (s: Synthesized) => unknown;
}> = [
  {
    name: 'deadLetterQueueNotEmpty',
    namespace: 'AWS/SQS',
    metric: 'ApproximateNumberOfMessagesVisible',
    statistic: 'Maximum',
    dimensions: (s) => [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [s.ids.deadLetterQueue, 'QueueName'] } }],
  },
  {
    name: 'oldestMessageAge',
    namespace: 'AWS/SQS',
    metric: 'ApproximateAgeOfOldestMessage',
    statistic: 'Maximum',
    dimensions: (s) => [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [s.ids.queue, 'QueueName'] } }],
  },
  {
    name: 'functionErrors',
    namespace: 'AWS/Lambda',
    metric: 'Errors',
    statistic: 'Sum',
    dimensions: (s) => [{ Name: 'FunctionName', Value: { Ref: s.ids.function } }],
  },
  {
    name: 'ambiguousSends',
    namespace: 'EmailPipeline',
    metric: 'AmbiguousSends',
    statistic: 'Sum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
  {
    name: 'completionWriteFailures',
    namespace: 'EmailPipeline',
    metric: 'CompletionWriteFailures',
    statistic: 'Sum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
  {
    name: 'systemicFailures',
    namespace: 'EmailPipeline',
    metric: 'SystemicFailures',
    statistic: 'Sum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
  {
    name: 'snsDeliveryFailures',
    namespace: 'AWS/SNS',
    metric: 'NumberOfNotificationsFailed',
    statistic: 'Sum',
    dimensions: (s) => [{ Name: 'TopicName', Value: { 'Fn::GetAtt': [s.ids.topic, 'TopicName'] } }],
  },
  {
    name: 'sesBounceRate',
    namespace: 'AWS/SES',
    metric: 'Reputation.BounceRate',
    statistic: 'Maximum',
    dimensions: () => undefined,
  },
  {
    name: 'unconfirmedResends',
    namespace: 'EmailPipeline',
    metric: 'UnconfirmedResends',
    statistic: 'Sum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
  {
    name: 'ledgerUntrustedEvents',
    namespace: 'EmailPipeline',
    metric: 'LedgerUntrustedEvents',
    statistic: 'Sum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
  {
    name: 'ledgerDeadLetters',
    namespace: 'AWS/SQS',
    metric: 'ApproximateNumberOfMessagesVisible',
    statistic: 'Maximum',
    dimensions: (s) => [
      {
        Name: 'QueueName',
        Value: {
          'Fn::GetAtt': [
            s.stack.getLogicalId(s.stack.pipeline.ledger.bufferDeadLetterQueue.node.defaultChild as CfnResource),
            'QueueName',
          ],
        },
      },
    ],
  },
  {
    name: 'retryingTooLong',
    namespace: 'EmailPipeline',
    metric: 'RetryAgeSeconds',
    statistic: 'Maximum',
    dimensions: () => [{ Name: 'service', Value: 'email-pipeline' }],
  },
];

describe('alarms', () => {
  test.each(cases)('$name alarms on $namespace $metric above its default threshold', (c) => {
    const s = synthDefault();
    const d = DEFAULT_ALARMS[c.name];
    const topic = alarmTopicId(s);
    expect(alarmOn(s, c.namespace, c.metric, c.dimensions(s)).Properties).toEqual(
      expect.objectContaining({
        Statistic: c.statistic,
        Threshold: d.threshold,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: d.evaluationPeriods,
        Period: d.periodSeconds,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
      }),
    );
    expect(alarmOn(s, c.namespace, c.metric, c.dimensions(s)).Properties.Dimensions).toEqual(c.dimensions(s));
  });

  test('there is one alarm per documented alarm and no other', () => {
    expect(alarms(synthDefault())).toHaveLength(Object.keys(DEFAULT_ALARMS).length);
    expect(cases.map((c) => c.name).sort()).toEqual(Object.keys(DEFAULT_ALARMS).sort());
  });

  test('the documented defaults', () => {
    expect(DEFAULT_ALARMS.oldestMessageAge.threshold).toBe(1800);
    expect(DEFAULT_ALARMS.sesBounceRate.threshold).toBe(0.05);
    expect(DEFAULT_ALARMS.deadLetterQueueNotEmpty.threshold).toBe(0);
  });

  test('an alarm can be tuned', () => {
    const s = synthesize({}, undefined, {
      monitoring: { alarms: { oldestMessageAge: { threshold: 600, evaluationPeriods: 3, periodSeconds: 60 } } },
    });
    expect(alarmOn(s, 'AWS/SQS', 'ApproximateAgeOfOldestMessage').Properties).toMatchObject({
      Threshold: 600,
      EvaluationPeriods: 3,
      Period: 60,
    });
  });

  test('an alarm can be switched off', () => {
    const s = synthesize({}, undefined, { monitoring: { alarms: { sesBounceRate: { enabled: false } } } });
    expect(alarms(s).some((a) => a.Properties.MetricName === 'Reputation.BounceRate')).toBe(false);
    expect(alarms(s)).toHaveLength(Object.keys(DEFAULT_ALARMS).length - 1);
  });

  test('a bad tuning fails the synth naming the setting', () => {
    expect(() =>
      synthesize({}, undefined, { monitoring: { alarms: { functionErrors: { periodSeconds: 90 } } } }),
    ).toThrow(/alarms\.functionErrors\.periodSeconds=90/);
    expect(() => synthesize({}, undefined, { monitoring: { alarms: { functionErrors: { threshold: -1 } } } })).toThrow(
      SettingsError,
    );
  });

  test('OK notifications can be turned off', () => {
    const s = synthesize({}, undefined, { monitoring: { notifyOnOk: false } });
    for (const a of alarms(s)) expect(a.Properties.OKActions).toBeUndefined();
  });
});

describe('alarm topic', () => {
  test('is encrypted and TLS only, and lets CloudWatch alarms of this account publish', () => {
    const s = synthDefault();
    const topicId = alarmTopicId(s);
    const topic = s.template.toJSON().Resources[topicId];
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    const policy = Object.values(s.template.findResources('AWS::SNS::TopicPolicy')).find((p) =>
      p.Properties.Topics.some((t: { Ref: string }) => t.Ref === topicId),
    )!;
    const statements: Array<Record<string, any>> = policy.Properties.PolicyDocument.Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sns:Publish',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
      }),
    );
  });

  test('subscribes alarmEmail when given', () => {
    const s = synthesize({}, undefined, { monitoring: { alarmEmail: 'oncall@example.com' } });
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: alarmTopicId(s) },
    });
  });

  test('has no email subscription by default', () => {
    const subs = Object.values(synthDefault().template.findResources('AWS::SNS::Subscription'));
    expect(subs.filter((x) => x.Properties.Protocol === 'email')).toHaveLength(0);
  });
});

describe('dashboard', () => {
  function widgets(s: Synthesized): Array<{ type: string; properties: Record<string, any> }> {
    const dashboards = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    return JSON.parse(flattenJoin(dashboards[0].Properties.DashboardBody)).widgets;
  }

  test('reads top to bottom as the flow', () => {
    const sections = widgets(synthDefault())
      .filter((w) => w.type === 'text' && String(w.properties.markdown).startsWith('## '))
      .map((w) => String(w.properties.markdown).replace(/^## /, '').split(':')[0]);
    expect(sections).toEqual([
      '1. Publish',
      '2. Queue',
      '3. Function',
      '4. Idempotency store',
      '5. Outcomes',
      '5b. Brown-outs',
      '6. SES account',
      '7. Deliveries',
    ]);
  });

  test('graphs each stage with titled, labelled axes', () => {
    const graphs = widgets(synthDefault()).filter((w) => w.type === 'metric');
    expect(graphs.length).toBeGreaterThanOrEqual(14);
    for (const g of graphs) {
      expect(g.properties.title).toEqual(expect.any(String));
      expect(g.properties.yAxis.left.label).toEqual(expect.any(String));
    }
    const body = JSON.stringify(graphs);
    for (const name of [
      'NumberOfMessagesPublished',
      'NumberOfNotificationsFailed',
      'ApproximateNumberOfMessagesVisible',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateAgeOfOldestMessage',
      'Invocations',
      'Errors',
      'Throttles',
      'Duration',
      'ConcurrentExecutions',
      'SuccessfulRequestLatency',
    ]) {
      expect(body).toContain(`"${name}"`);
    }
  });

  test('shows every handler metric in its namespace with the service dimension', () => {
    const body = JSON.stringify(widgets(synthDefault()));
    for (const name of Object.values(HANDLER_METRICS)) {
      if (name === HANDLER_METRICS.permanentFailuresByReason) {
        // Has a second dimension (reason): shown through a SEARCH expression, a line per reason.
        expect(body).toContain(
          `SEARCH('{EmailPipeline,service,reason} MetricName=\\"${name}\\" service=\\"email-pipeline\\"', 'Sum', 300)`,
        );
      } else {
        expect(body).toContain(`["EmailPipeline","${name}","service","email-pipeline"`);
      }
    }
  });

  test('shows the SES account metrics', () => {
    const body = JSON.stringify(widgets(synthDefault()));
    for (const name of ['Send', 'Bounce', 'Complaint', 'Reputation.BounceRate']) {
      expect(body).toContain(`["AWS/SES","${name}"`);
    }
  });

  test('shows deliveries of this configuration set, confirmations and the ledger queues', () => {
    const body = JSON.stringify(widgets(synthesize({ configurationSetName: 'transactional' })));
    for (const name of ['Delivery', 'Bounce', 'Complaint']) {
      expect(body).toContain(`["AWS/SES","${name}","ses:configuration-set","transactional"`);
    }
    for (const name of Object.values(LEDGER_METRICS)) {
      expect(body).toContain(`["EmailPipeline","${name}","service","email-pipeline"`);
    }
    expect(body).toContain('Events in the ledger DLQ');
  });

  test('follows the configured namespace and service name', () => {
    const s = synthesize({ metricsNamespace: 'Mail/Prod', serviceName: 'mailer' });
    expect(JSON.stringify(widgets(s))).toContain('["Mail/Prod","EmailsSent","service","mailer"');
  });

  test('can be turned off', () => {
    const s = synthesize({}, undefined, { monitoring: { dashboard: false } });
    expect(Object.keys(s.template.findResources('AWS::CloudWatch::Dashboard'))).toHaveLength(0);
    expect(alarms(s).length).toBeGreaterThan(0);
  });
});
