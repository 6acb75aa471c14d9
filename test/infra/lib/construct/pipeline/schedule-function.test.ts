/**
 * The waiting lane on the template: the schedule queue (the queue key, the pipeline's DLQ, a
 * visibility of six times the schedule function's timeout), the schedule function (small, its own
 * role, its own mapping with few concurrent invocations, the queues in its environment) and the
 * send function's environment naming the schedule queue. The queue's policy is tested beside the
 * others' (resource-policies.test.ts).
 */
import { CfnResource } from 'aws-cdk-lib';
import { ENV } from '../../../../../lambdas/kernel/environment';
import { SCHEDULE_FUNCTION } from '../../../../../lib/construct/pipeline/schedule-function';
import {
  arnOf,
  functionPolicyStatements,
  resource,
  sendFunctionResource,
  statementsFor,
  synthDefault,
  type Synthesized,
} from '../../../helpers';

const id = (s: Synthesized, c: { node: { defaultChild?: unknown } }) =>
  s.stack.getLogicalId(c.node.defaultChild as CfnResource);
const ids = (s: Synthesized) => ({
  scheduleQueue: id(s, s.stack.pipeline.scheduleQueue),
  scheduleFunction: id(s, s.stack.pipeline.scheduleFunction),
});
const asList = <T>(v: T | T[]): T[] => ([] as T[]).concat(v);

describe('the schedule queue', () => {
  test('is encrypted with the queue key, redrives to the pipeline’s DLQ and waits out a slow invocation', () => {
    const s = synthDefault();
    const queue = resource(s.template, ids(s).scheduleQueue).Properties;
    expect(queue.KmsMasterKeyId).toEqual(arnOf(s.ids.queueKey));
    expect(queue.RedrivePolicy).toEqual({
      deadLetterTargetArn: arnOf(s.ids.deadLetterQueue),
      maxReceiveCount: s.stack.pipeline.settings.maxReceiveCount,
    });
    expect(queue.VisibilityTimeout).toBe(SCHEDULE_FUNCTION.timeoutSeconds * 6);
    expect(queue.MessageRetentionPeriod).toBe(s.stack.pipeline.settings.retentionPeriodSeconds);
  });

  test('is no topic’s subscriber: only the functions put copies in it', () => {
    const s = synthDefault();
    const subscribed = Object.values(s.template.findResources('AWS::SNS::Subscription')).filter((r) =>
      JSON.stringify(r.Properties.Endpoint).includes(`"${ids(s).scheduleQueue}"`),
    );
    expect(subscribed).toEqual([]);
  });

  test('the send function’s environment names it, beside its own queues', () => {
    const s = synthDefault();
    const variables = sendFunctionResource(s.template).Properties.Environment.Variables;
    expect(variables[ENV.scheduleQueueUrl]).toEqual({ Ref: ids(s).scheduleQueue });
    expect(variables[ENV.sourceQueueUrl]).toEqual({ Ref: s.ids.queue });
  });
});

describe('the schedule function', () => {
  test('is small and apart: 128 MB, arm64, its own role, its queues in its environment', () => {
    const s = synthDefault();
    const fn = resource(s.template, ids(s).scheduleFunction).Properties;
    expect(fn).toMatchObject({ MemorySize: 128, Timeout: SCHEDULE_FUNCTION.timeoutSeconds, Architectures: ['arm64'] });
    expect(fn.Role).not.toEqual(sendFunctionResource(s.template).Properties.Role);
    expect(fn.Environment.Variables).toMatchObject({
      [ENV.scheduleQueueUrl]: { Ref: ids(s).scheduleQueue },
      [ENV.sourceQueueUrl]: { Ref: s.ids.queue },
      [ENV.highPriorityQueueUrl]: { Ref: s.ids.highPriorityQueue },
      POWERTOOLS_SERVICE_NAME: s.stack.pipeline.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: s.stack.pipeline.settings.metricsNamespace,
    });
  });

  test('its mapping reads the schedule queue, ten at a time, at most five at once, reporting item failures', () => {
    const s = synthDefault();
    const mappings = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: ids(s).scheduleFunction }),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({
      EventSourceArn: arnOf(ids(s).scheduleQueue),
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: SCHEDULE_FUNCTION.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  test('the send function’s mappings do not read the schedule queue: its hops take none of their concurrency', () => {
    const s = synthDefault();
    const sendFunction = sendFunctionResource(s.template).id;
    const sources = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping'))
      .filter((m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: sendFunction }))
      .map((m) => JSON.stringify(m.Properties.EventSourceArn));
    expect(sources.sort()).toEqual(
      [arnOf(s.ids.queue), arnOf(s.ids.highPriorityQueue)].map((a) => JSON.stringify(a)).sort(),
    );
  });

  test('may send to the schedule queue and the two lanes’ queues only, and use the queue key only', () => {
    const s = synthDefault();
    const statements = functionPolicyStatements(s.template, ids(s).scheduleFunction);
    const sendTo = statementsFor(statements, 'sqs:SendMessage').flatMap((st) => asList(st.Resource));
    expect(sendTo.map((r) => JSON.stringify(r)).sort()).toEqual(
      [arnOf(ids(s).scheduleQueue), arnOf(s.ids.queue), arnOf(s.ids.highPriorityQueue)]
        .map((r) => JSON.stringify(r))
        .sort(),
    );
    const actions = new Set(
      statements.filter((st) => st.Effect === 'Allow').flatMap((st) => asList<string>(st.Action)),
    );
    expect([...actions].filter((a) => /^(dynamodb|ses|sns|s3):/.test(a))).toEqual([]);
    const keys = statements.filter((st) => asList<string>(st.Action).some((a) => a.startsWith('kms:')));
    expect(new Set(keys.flatMap((st) => asList(st.Resource)).map((r) => JSON.stringify(r)))).toEqual(
      new Set([JSON.stringify(arnOf(s.ids.queueKey))]),
    );
  });
});
