/**
 * The lanes as the send function sees them (send/lanes.ts): which queue an invocation's records come
 * from, by the queue's name in its URL and its ARN.
 */
import { laneOfSource, queueName } from '../../../../../lambdas/send-email/send/lanes';

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
