/** Which dead-letter queues `verify` looks into: the pipeline's, and the callbacks DLQ where there are callbacks. */
import { deadLetterQueues } from '../../../../lib/cli/verify-command';

const outputs = {
  DeadLetterQueueUrl: 'https://sqs/dlq',
  SubscriptionDeadLetterQueueUrl: 'https://sqs/sub-dlq',
  LedgerDeadLetterQueueUrl: 'https://sqs/ledger-dlq',
};

test('without callbacks: the three of the pipeline', () => {
  expect(deadLetterQueues(outputs, 'stack S')).toEqual([
    ['send', 'https://sqs/dlq'],
    ['subscription', 'https://sqs/sub-dlq'],
    ['ledger', 'https://sqs/ledger-dlq'],
  ]);
});

test('with callbacks (the Callbacks output, as JSON text from a stack), the callbacks DLQ too', () => {
  const Callbacks = JSON.stringify({
    QueueUrl: 'https://sqs/cb',
    DeadLetterQueueUrl: 'https://sqs/cb-dlq',
    TableName: 't',
  });
  expect(deadLetterQueues({ ...outputs, Callbacks }, 'stack S').at(-1)).toEqual(['callbacks', 'https://sqs/cb-dlq']);
});

test('an older stack without a subscription DLQ output: only the queues it names', () => {
  expect(deadLetterQueues({ DeadLetterQueueUrl: 'https://sqs/dlq' }, 'stack S')).toEqual([['send', 'https://sqs/dlq']]);
});
