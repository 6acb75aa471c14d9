import { StartMessageMoveTaskCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describeDeadLetter, redrive } from '../../../../lib/dlq/dead-letters';

/** Records the commands sent; answers a move task with a handle. */
function recordingClient() {
  const sent: unknown[] = [];
  const client = {
    send: async (command: unknown) => {
      sent.push(command);
      return { TaskHandle: 'task-1' };
    },
  } as unknown as SQSClient;
  return { client, sent };
}

const queues = {
  dlqUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/email-dlq',
  dlqArn: 'arn:aws:sqs:eu-west-1:123456789012:email-dlq',
  sourceQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/email-queue',
  sourceQueueArn: 'arn:aws:sqs:eu-west-1:123456789012:email-queue',
};

describe('redrive on AWS', () => {
  test('starts the native message move task from the DLQ to the source queue', async () => {
    const { client, sent } = recordingClient();
    const result = await redrive(client, queues);
    expect(result).toEqual({ moved: -1, mode: 'native', taskHandle: 'task-1' });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(StartMessageMoveTaskCommand);
    expect((sent[0] as StartMessageMoveTaskCommand).input).toEqual({
      SourceArn: queues.dlqArn,
      DestinationArn: queues.sourceQueueArn,
    });
  });

  test('with --max copies message by message instead (the move task has a rate, not a count)', async () => {
    const { client, sent } = recordingClient();
    const result = await redrive(client, { ...queues, max: 5 });
    expect(result.mode).toBe('copy');
    expect(sent.some((c) => c instanceof StartMessageMoveTaskCommand)).toBe(false);
  });
});

describe('describeDeadLetter', () => {
  test('a message moved by the redrive policy is reported as retries exhausted, with its key and masked recipient', () => {
    const body = JSON.stringify({
      Type: 'Notification',
      MessageId: 'sns-1',
      Message: JSON.stringify({ to: 'ada@example.com', subject: 'S', text: 'T' }),
    });
    const letter = describeDeadLetter({ MessageId: 'm1', Body: body, Attributes: { SentTimestamp: '1000' } }, 61_000);
    expect(letter).toEqual({
      messageId: 'm1',
      ageSeconds: 60,
      errorClass: 'retries exhausted',
      errorCode: 'MaxReceiveCountExceeded',
      reason: expect.stringMatching(/maxReceiveCount/),
      dedupeKey: 'sns-1',
      recipient: 'a***@example.com',
    });
  });

  test('a message the handler dead-lettered shows the handler’s own class, code and reason', () => {
    const attr = (value: string) => ({ DataType: 'String', StringValue: value });
    const letter = describeDeadLetter(
      {
        MessageId: 'm2',
        Body: '{}',
        MessageAttributes: {
          'error-class': attr('permanent'),
          'error-code': attr('MessageRejected'),
          'error-reason': attr('SES refused the email'),
          'dedupe-key': attr('order-7'),
          'failed-at': attr(new Date(10_000).toISOString()),
        },
      },
      70_000,
    );
    expect(letter).toEqual(
      expect.objectContaining({
        errorClass: 'permanent',
        errorCode: 'MessageRejected',
        reason: 'SES refused the email',
        dedupeKey: 'order-7',
        ageSeconds: 60,
      }),
    );
  });
});
