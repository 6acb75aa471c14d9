/**
 * The lanes as the send function sees them (send/lanes.ts): which queue an invocation's records come
 * from, and which envelopes on the work queue are copies the high-priority queue's filter also took.
 */
import { isHighPriorityEnvelope, laneOfSource, queueName } from '../../lambdas/send-email/send/lanes';

const envelope = (attributes: Record<string, { Type: string; Value: string }> | undefined) =>
  JSON.stringify({
    Type: 'Notification',
    MessageId: 'm-1',
    Message: '{}',
    ...(attributes ? { MessageAttributes: attributes } : {}),
  });

test('a queue is known by its name in its URL and its ARN', () => {
  expect(queueName('https://sqs.eu-west-1.amazonaws.com/123456789012/pipe-high')).toBe('pipe-high');
  expect(queueName('arn:aws:sqs:eu-west-1:123456789012:pipe-high')).toBe('pipe-high');
  expect(queueName('http://sqs.eu-west-1.localhost:4566/000000000000/local-high')).toBe('local-high');
});

test("records from the high-priority queue are the high lane's; any other queue, or none configured, normal", () => {
  const high = 'https://sqs.eu-west-1.amazonaws.com/123456789012/pipe-high';
  expect(laneOfSource('arn:aws:sqs:eu-west-1:123456789012:pipe-high', high)).toBe('high');
  expect(laneOfSource('arn:aws:sqs:eu-west-1:123456789012:pipe-work', high)).toBe('normal');
  expect(laneOfSource('arn:aws:sqs:eu-west-1:123456789012:pipe-high', undefined)).toBe('normal');
  expect(laneOfSource(undefined, high)).toBe('normal');
});

test.each([
  ['String high', { priority: { Type: 'String', Value: 'high' } }, true],
  ['String.Array holding high', { priority: { Type: 'String.Array', Value: '["low","high"]' } }, true],
  ['String normal', { priority: { Type: 'String', Value: 'normal' } }, false],
  ['String HIGH (SNS matches exactly)', { priority: { Type: 'String', Value: 'HIGH' } }, false],
  ['Number', { priority: { Type: 'Number', Value: '1' } }, false],
  ['another attribute only', { 'idempotency-key': { Type: 'String', Value: 'k' } }, false],
  ['no attributes at all', undefined, false],
])('the high queue filter takes a copy of an envelope with %s: %s', (_, attributes, high) => {
  expect(isHighPriorityEnvelope(envelope(attributes))).toBe(high);
});

test('a body that is not JSON is not a high-priority copy (the normal lane dead-letters it as before)', () => {
  expect(isHighPriorityEnvelope('{"priority": not json')).toBe(false);
});
