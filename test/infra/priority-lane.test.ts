/**
 * The high-priority lane on the template: its queue (like the work queue), its subscription with
 * the `priority = high` filter (the work queue's subscription has none, so that a message without
 * message attributes is never filtered out), its own event source mapping without a batching
 * window, and the send function's environment naming it.
 */
import { ENV } from '../../lambdas/kernel/environment';
import { resource, synthDefault, synthesize } from './helpers';

const subscriptionTo = (logicalId: string) => {
  const { template } = synthDefault();
  const found = Object.values(template.findResources('AWS::SNS::Subscription')).filter(
    (r) => JSON.stringify(r.Properties.Endpoint) === JSON.stringify({ 'Fn::GetAtt': [logicalId, 'Arn'] }),
  );
  expect(found).toHaveLength(1);
  return found[0]!.Properties as Record<string, unknown>;
};

const mappingOf = (logicalId: string, s = synthDefault()) => {
  const found = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
    (r) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify({ 'Fn::GetAtt': [logicalId, 'Arn'] }),
  );
  expect(found).toHaveLength(1);
  return found[0]!.Properties as Record<string, any>;
};

test('the high-priority queue is subscribed with the filter priority = high, envelope kept, same subscription DLQ', () => {
  const { ids } = synthDefault();
  const high = subscriptionTo(ids.highPriorityQueue);
  expect(high.FilterPolicy).toEqual({ priority: ['high'] });
  expect(high.RawMessageDelivery).not.toBe(true);
  expect(high.RedrivePolicy).toEqual(subscriptionTo(ids.queue).RedrivePolicy);
});

test('the work queue is subscribed without a filter: a message with no attributes at all must reach it', () => {
  const { ids } = synthDefault();
  expect(subscriptionTo(ids.queue).FilterPolicy).toBeUndefined();
});

test('the high-priority queue has its own mapping: no batching window, batch item failures reported', () => {
  const { ids } = synthDefault();
  const high = mappingOf(ids.highPriorityQueue);
  expect(high.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
  expect(high.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  expect(high.ScalingConfig).toEqual({ MaximumConcurrency: 10 });
  expect(high.BatchSize).toBe(10);
  expect(mappingOf(ids.queue).MaximumBatchingWindowInSeconds).toBe(1);
});

test('without a batching window its batch holds at most 10, whatever batchSize the work queue has', () => {
  const s = synthesize({ batchSize: 50, maxBatchingWindowSeconds: 2 });
  expect(mappingOf(s.ids.highPriorityQueue, s).BatchSize).toBe(10);
  expect(mappingOf(s.ids.queue, s).BatchSize).toBe(50);
});

test('the high-priority queue is the work queue in all but its name: retention, visibility, key and DLQ', () => {
  const { template, ids } = synthDefault();
  const { QueueName: normalName, ...normal } = resource(template, ids.queue).Properties;
  const { QueueName: highName, ...high } = resource(template, ids.highPriorityQueue).Properties;
  expect(high).toEqual(normal);
  expect(String(highName)).toMatch(/-high$/);
  expect(String(normalName)).toMatch(/-work$/);
});

test("the send function's environment names the high-priority queue and the reserve", () => {
  const { template, ids } = synthDefault();
  const vars = resource(template, ids.function).Properties.Environment.Variables;
  expect(vars[ENV.highPriorityQueueUrl]).toEqual({ Ref: ids.highPriorityQueue });
  expect(vars[ENV.highPriorityRateShare]).toBe('20');
});
