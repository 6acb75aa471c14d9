/**
 * Taking messages off a local queue by hand, for tests and tools that need a real SNS envelope
 * out of the pipeline's way: every delete is checked (SQS reports a failed delete in the answer,
 * not as an error, and a message left behind would be delivered again).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';

async function deleteAll(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<void> {
  const { Failed = [] } = await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
    }),
  );
  if (Failed.length > 0) {
    const why = Failed.map((f) => `${f.Code ?? 'error'}: ${f.Message ?? ''}`).join('; ');
    throw new Error(`could not delete ${Failed.length} message(s) from ${queueUrl} (${why})`);
  }
}

function receive(sqs: SQSClient, queueUrl: string, max: number) {
  return sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: Math.min(10, max),
      WaitTimeSeconds: 1,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
}

/**
 * Receives and deletes messages until `count` have arrived or `timeoutMs`
 * passes. Returns them oldest receive first.
 */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 15_000,
): Promise<Message[]> {
  const out: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < count && Date.now() < deadline) {
    const { Messages = [] } = await receive(sqs, queueUrl, count - out.length);
    if (Messages.length === 0) continue;
    out.push(...Messages);
    await deleteAll(sqs, queueUrl, Messages);
  }
  if (out.length < count)
    throw new Error(`expected ${count} messages on ${queueUrl}, got ${out.length} in ${timeoutMs} ms`);
  return out;
}

/**
 * Takes the one message `wanted` picks off a queue and deletes it; any other message received on
 * the way is made visible again at once, untouched but for its receive count. Throws when none is
 * found within `timeoutMs`.
 */
export async function takeMessage(
  sqs: SQSClient,
  queueUrl: string,
  wanted: (message: Message) => boolean,
  timeoutMs = 15_000,
): Promise<Message> {
  const deadline = Date.now() + timeoutMs;
  const others: Message[] = [];
  try {
    while (Date.now() < deadline) {
      const { Messages = [] } = await receive(sqs, queueUrl, 10);
      const found = Messages.find(wanted);
      others.push(...Messages.filter((m) => m !== found));
      if (found) {
        await deleteAll(sqs, queueUrl, [found]);
        return found;
      }
    }
  } finally {
    for (let i = 0; i < others.length; i += 10) {
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: others
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '', VisibilityTimeout: 0 })),
        }),
      );
    }
  }
  throw new Error(`no such message on ${queueUrl} in ${timeoutMs} ms (${others.length} other(s) received)`);
}
