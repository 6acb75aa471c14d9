/**
 * The lanes as the send function sees them (send/lanes.ts): which queue an invocation's records come
 * from, by the queue's name in its URL and its ARN, and so which queue its retries go back to.
 */
import { lastPart as queueName } from '../../../../../lambdas/kernel/teams';
import { laneOfSource, sourceOf } from '../../../../../lambdas/send-email/send/lanes';

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

test("records from a team's queue are that team's, on the normal lane, and go back to that queue", () => {
  const url = (name: string) => `https://sqs.eu-west-1.amazonaws.com/123456789012/${name}`;
  const arn = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:${name}`;
  const settings = {
    sourceQueueUrl: url('pipe-work'),
    highPriorityQueueUrl: url('pipe-high'),
    teams: {
      billing: {
        topicArn: 'arn:aws:sns:eu-west-1:123456789012:billing',
        queueUrl: url('pipe-t-billing'),
        senders: ['b@x'],
      },
      legacy: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:legacy', senders: ['l@x'] },
    },
  };
  expect(sourceOf(arn('pipe-t-billing'), settings)).toEqual({
    id: 'team:billing',
    lane: 'normal',
    queueUrl: url('pipe-t-billing'),
  });
  expect(sourceOf(arn('pipe-high'), settings)).toEqual({ id: 'high', lane: 'high', queueUrl: url('pipe-high') });
  expect(sourceOf(arn('pipe-work'), settings)).toEqual({ id: 'normal', lane: 'normal', queueUrl: url('pipe-work') });
  // A queue no team owns (or a team without a queue of its own) is the work queue's lane.
  expect(sourceOf(arn('pipe-t-other'), settings)).toEqual({ id: 'normal', lane: 'normal', queueUrl: url('pipe-work') });
  expect(sourceOf(undefined, { sourceQueueUrl: url('pipe-work') })).toEqual({
    id: 'normal',
    lane: 'normal',
    queueUrl: url('pipe-work'),
  });
});
