import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';

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
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, count - out.length),
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) continue;
    out.push(...Messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
  if (out.length < count)
    throw new Error(`expected ${count} messages on ${queueUrl}, got ${out.length} in ${timeoutMs} ms`);
  return out;
}
