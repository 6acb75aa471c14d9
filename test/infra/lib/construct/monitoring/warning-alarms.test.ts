/** The warnings that came with the alarm catalog, as synthesized: what each reads and where it notifies. */
import type { CfnResource } from 'aws-cdk-lib';
import { CALLBACK_PROPS, flattenJoin, synthDefault, synthesize, type Synthesized } from '../../../helpers';

type Alarm = { Properties: Record<string, any> };

function alarmEndingWith(s: Synthesized, suffix: string): Alarm {
  const found = (Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Alarm[]).filter((a) =>
    String(a.Properties.AlarmName).endsWith(suffix),
  );
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('rateLeaseRepairs', () => {
  test("warns on any RateLeaseRepairs of the send function's service, on the warning topic", () => {
    const s = synthDefault();
    const a = alarmEndingWith(s, '-warn-RateLeaseRepairs');

    expect(a.Properties).toMatchObject({
      MetricName: 'RateLeaseRepairs',
      Namespace: s.stack.pipeline.settings.metricsNamespace,
      Dimensions: [{ Name: 'service', Value: s.stack.pipeline.serviceName }],
      Statistic: 'Sum',
      Threshold: 0,
      AlarmActions: [s.stack.resolve(s.stack.monitoring!.warningTopic.topicArn)],
    });
    expect(flattenJoin(a.Properties.AlarmDescription)).toContain('static share');
  });
});

describe('cancelFunctionErrors', () => {
  test('watches the errors of the cancel function, not of the status function', () => {
    const s = synthDefault();
    const a = alarmEndingWith(s, '-warn-CancelFunctionErrors');
    const ledger = s.stack.pipeline.ledger;

    expect(a.Properties).toMatchObject({ MetricName: 'Errors', Namespace: 'AWS/Lambda', Statistic: 'Sum' });
    expect(a.Properties.Dimensions).toEqual([
      { Name: 'FunctionName', Value: s.stack.resolve(ledger.cancelFunction.functionName) },
    ]);
    expect(alarmEndingWith(s, '-warn-StatusFunctionErrors').Properties.Dimensions).toEqual([
      { Name: 'FunctionName', Value: s.stack.resolve(ledger.statusFunction.functionName) },
    ]);
  });

  test('can be switched off alone', () => {
    const s = synthesize({}, undefined, { monitoring: { alarms: { cancelFunctionErrors: { enabled: false } } } });
    const names = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).map((a) =>
      String(a.Properties.AlarmName),
    );

    expect(names.filter((n) => n.endsWith('-CancelFunctionErrors'))).toEqual([]);
    expect(names.filter((n) => n.endsWith('-StatusFunctionErrors'))).toHaveLength(1);
  });
});

describe('the callbacks’ warnings', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(CALLBACK_PROPS);
  });
  const ref = (c: { node: { defaultChild?: unknown } }) => s.stack.getLogicalId(c.node.defaultChild as CfnResource);

  test('none without callbacks', () => {
    const names = Object.values(synthDefault().template.findResources('AWS::CloudWatch::Alarm')).map((a) =>
      String(a.Properties.AlarmName),
    );
    expect(names.filter((name) => /Callback/.test(name))).toEqual([]);
  });

  test('callbackDeadLetters: any callback in the callbacks DLQ, on the warning topic', () => {
    const a = alarmEndingWith(s, '-warn-CallbackDeadLetters');
    expect(a.Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [ref(s.stack.pipeline.callbacks!.deadLetterQueue), 'QueueName'] } },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
      AlarmActions: [s.stack.resolve(s.stack.monitoring!.warningTopic.topicArn)],
    });
    expect(flattenJoin(a.Properties.AlarmDescription)).toContain('email-pipeline callbacks redrive');
  });

  test('callbacksLate: the callbacks queue’s oldest message over an hour old', () => {
    const a = alarmEndingWith(s, '-warn-CallbacksLate');
    expect(a.Properties).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [ref(s.stack.pipeline.callbacks!.queue), 'QueueName'] } },
      ],
      Statistic: 'Maximum',
      Threshold: 3600,
    });
  });

  test('callbacksDisabled: any CallbacksDisabled of the pipeline’s service', () => {
    const a = alarmEndingWith(s, '-warn-CallbacksDisabled');
    expect(a.Properties).toMatchObject({
      MetricName: 'CallbacksDisabled',
      Namespace: s.stack.pipeline.settings.metricsNamespace,
      Dimensions: [{ Name: 'service', Value: s.stack.pipeline.serviceName }],
      Statistic: 'Sum',
      Threshold: 0,
    });
    expect(flattenJoin(a.Properties.AlarmDescription)).toContain('email-pipeline callbacks enable --team');
  });
});
