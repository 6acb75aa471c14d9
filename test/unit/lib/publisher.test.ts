/**
 * The publisher client: what it sends to SNS (the exact command shapes, answered by a stand-in at
 * the front of the SDK's middleware stack), what it refuses before sending, and how a batch is
 * split and reported.
 */
import { SNSClient, type PublishBatchRequestEntry } from '@aws-sdk/client-sns';
import { checkEmail, EmailPublisher, InvalidMessageError, SNS_LIMITS, type BatchEntry } from '../../../lib/publisher';
import { LIMITS, type EmailMessageInput } from '../../../lambdas/kernel/contract';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:emails';

interface Call {
  readonly command: string;
  readonly input: Record<string, unknown>;
}

type Answer = (call: Call) => object;

/** SNS's answer when every entry is published. */
const allPublished: Answer = ({ command, input }) =>
  command === 'PublishCommand'
    ? { MessageId: 'm-1' }
    : {
        Successful: (input.PublishBatchRequestEntries as PublishBatchRequestEntry[]).map((e) => ({
          Id: e.Id,
          MessageId: `m-${e.Id ?? ''}`,
        })),
        Failed: [],
      };

/** A publisher whose SNS client answers with `answer` (a thrown error fails the request) and records each call. */
function publisher(answer: Answer = allPublished): { client: EmailPublisher; calls: Call[] } {
  const sns = new SNSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  const calls: Call[] = [];
  sns.middlewareStack.add(
    (_next, context) => (args) => {
      const call = { command: context.commandName ?? '', input: args.input as Record<string, unknown> };
      calls.push(call);
      return Promise.resolve({ output: { $metadata: {}, ...answer(call) }, response: {} });
    },
    { step: 'initialize', name: 'stand-in-sns' },
  );
  return { client: new EmailPublisher({ topicArn: TOPIC_ARN, sns }), calls };
}

const message: EmailMessageInput = { to: 'ada@example.com', subject: 'Your order', text: 'It shipped.' };

/** Runs `fn`, which must throw an InvalidMessageError, and returns it. */
async function refusal(fn: () => unknown): Promise<InvalidMessageError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return error as InvalidMessageError;
  }
  throw new Error('expected an InvalidMessageError');
}

describe('publish', () => {
  test('sends the message as JSON with the idempotency key as a String attribute', async () => {
    const { client, calls } = publisher();

    const published = await client.publish(message, { idempotencyKey: 'order-42' });

    expect(calls).toEqual([
      {
        command: 'PublishCommand',
        input: {
          TopicArn: TOPIC_ARN,
          Message: JSON.stringify(message),
          MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'order-42' } },
        },
      },
    ]);
    expect(published).toEqual({ messageId: 'm-1', dedupeKey: 'order-42' });
  });

  test('without a key no attribute is sent and the MessageId is the dedupe key', async () => {
    const { client, calls } = publisher();

    const published = await client.publish(message);

    expect(calls[0]?.input).toEqual({ TopicArn: TOPIC_ARN, Message: JSON.stringify(message) });
    expect(published.dedupeKey).toBe('m-1');
  });

  test('a message that breaks the contract is refused with each field and reason, and not sent', async () => {
    const { client, calls } = publisher();

    const error = await refusal(() =>
      client.publish({ to: ['ada@example.com', 'not-an-address'], subject: 'Hi\r\nBcc: x@example.com', text: 'T' }),
    );

    expect(error.code).toBe('InvalidMessage');
    expect(error.issues.map((i) => i.field)).toEqual(['to[1]', 'subject']);
    expect(error.message).toContain('subject: must not contain CR or LF (header injection)');
    expect(calls).toEqual([]);
  });

  test('a key the pipeline would refuse is refused with the attribute named, and not sent', async () => {
    const { client, calls } = publisher();

    const error = await refusal(() => client.publish(message, { idempotencyKey: ' order-42' }));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([
      { field: 'attribute idempotency-key', reason: 'must not be empty or start or end with spaces' },
    ]);
    expect(calls).toEqual([]);
  });

  test('a bad key and a bad message are reported together', async () => {
    const error = await refusal(() =>
      publisher().client.publish({ ...message, to: [] }, { idempotencyKey: 'k'.repeat(LIMITS.maxKeyLength + 1) }),
    );

    expect(error.issues.map((i) => i.field)).toEqual(['attribute idempotency-key', 'to']);
  });

  test("a message within the contract but over SNS's size once escaped as JSON is refused", async () => {
    // 150 KiB of quotes: within the contract's 200 KiB, but 300 KiB as a JSON string.
    const error = await refusal(() => checkEmail({ ...message, text: '"'.repeat(150 * 1024) }));

    expect(error.issues).toEqual([
      {
        field: 'message',
        reason: expect.stringContaining(`over SNS's limit of ${SNS_LIMITS.maxMessageBytes}`) as string,
      },
    ]);
  });

  test('a message nested deeper than the contract allows is refused on template.data, not a stack overflow, and not sent', async () => {
    let data: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i += 1) data = { k: data };
    const { client, calls } = publisher();

    const error = await refusal(() =>
      client.publish({ to: 'ada@example.com', template: { name: 'welcome', data } }, { idempotencyKey: 'deep-1' }),
    );

    expect(error.issues).toEqual([
      { field: 'template.data', reason: expect.stringContaining(`at most ${LIMITS.maxDepth} levels`) as string },
    ]);
    expect(calls).toEqual([]);
  });

  test('a message JSON cannot serialize (a BigInt) is refused on message with the reason, not thrown as it is', async () => {
    const error = await refusal(() =>
      checkEmail({ to: 'ada@example.com', template: { name: 'welcome', data: { total: 10n } } } as never),
    );

    expect(error.issues).toEqual([
      { field: 'message', reason: expect.stringContaining('cannot be serialized as JSON (TypeError') as string },
    ]);
  });

  test('a key is sent and reported as the pipeline compares keys (Unicode NFC)', async () => {
    const { client, calls } = publisher();

    const published = await client.publish(message, { idempotencyKey: 'cafe\u0301-42' });

    expect(calls[0]?.input.MessageAttributes).toEqual({
      'idempotency-key': { DataType: 'String', StringValue: 'caf\u00e9-42' },
    });
    expect(published.dedupeKey).toBe('caf\u00e9-42');
  });

  test('checkEmail returns the email as the pipeline will send it', () => {
    expect(checkEmail({ to: 'José <jose@bücher.example>', template: { name: 'welcome' } })).toMatchObject({
      to: ['=?UTF-8?B?Sm9zw6k=?= <jose@xn--bcher-kva.example>'],
      template: { name: 'welcome', data: {} },
    });
  });
});

describe('publishBatch', () => {
  const entries = (count: number, size = 10): BatchEntry[] =>
    Array.from({ length: count }, (_, i) => ({
      message: { ...message, text: `${i} ${'x'.repeat(size)}` },
      idempotencyKey: `key-${i}`,
    }));
  const batchIds = (calls: readonly Call[]) =>
    calls.map((c) => (c.input.PublishBatchRequestEntries as PublishBatchRequestEntry[]).map((e) => e.Id));

  test('sends 10 entries a request, each with its message and key, and reports every one in order', async () => {
    const { client, calls } = publisher();

    const result = await client.publishBatch(entries(23));

    expect(batchIds(calls).map((ids) => ids.length)).toEqual([10, 10, 3]);
    expect(calls[0]?.input.TopicArn).toBe(TOPIC_ARN);
    expect((calls[2]?.input.PublishBatchRequestEntries as PublishBatchRequestEntry[])[2]).toEqual({
      Id: '22',
      Message: JSON.stringify(entries(23)[22]?.message),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'key-22' } },
    });
    expect(result.published).toBe(23);
    expect(result.failed).toBe(0);
    expect(result.results.map((r) => (r.ok ? r.dedupeKey : r.error.code))).toEqual(
      Array.from({ length: 23 }, (_, i) => `key-${i}`),
    );
  });

  test('keeps each request within 256 KiB', async () => {
    const { client, calls } = publisher();

    // Three entries of about 100 KiB: two fit in one request, the third goes in the next.
    await client.publishBatch(entries(3, 100 * 1024));

    expect(batchIds(calls)).toEqual([['0', '1'], ['2']]);
  });

  test('an entry SNS refuses is reported with its code; the others are published', async () => {
    const { client } = publisher(({ input }) => ({
      Successful: (input.PublishBatchRequestEntries as PublishBatchRequestEntry[])
        .filter((e) => e.Id !== '1')
        .map((e) => ({ Id: e.Id, MessageId: `m-${e.Id ?? ''}` })),
      Failed: [{ Id: '1', Code: 'InternalError', Message: 'try again', SenderFault: false }],
    }));

    const result = await client.publishBatch(entries(3));

    expect(result.results[1]).toEqual({
      index: 1,
      ok: false,
      error: { code: 'InternalError', message: 'try again', senderFault: false },
    });
    expect(result.results.map((r) => r.ok)).toEqual([true, false, true]);
  });

  test('an entry that breaks the contract is reported with its issues and not sent', async () => {
    const { client, calls } = publisher();
    const batch = entries(3);
    const bad = { ...batch[1], message: { ...message, to: 'nobody' } } as BatchEntry;

    const result = await client.publishBatch([batch[0] as BatchEntry, bad, batch[2] as BatchEntry]);

    expect(batchIds(calls)).toEqual([['0', '2']]);
    expect(result.results[1]).toMatchObject({
      ok: false,
      error: { code: 'InvalidMessage', senderFault: true, issues: [{ field: 'to' }] },
    });
    expect(result).toMatchObject({ published: 2, failed: 1 });
  });

  test('a request that fails reports each of its entries; the next requests are still sent', async () => {
    let requests = 0;
    const { client, calls } = publisher((call) => {
      requests += 1;
      if (requests === 1) throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      return allPublished(call);
    });

    const result = await client.publishBatch(entries(12));

    expect(calls).toHaveLength(2);
    expect(result.results).toHaveLength(12);
    expect(result.results.slice(0, 10).every((r) => !r.ok && r.error.code === 'TimeoutError')).toBe(true);
    expect(result.results.slice(10).every((r) => r.ok)).toBe(true);
  });

  test('an entry SNS answers nothing about is reported, not lost', async () => {
    const { client } = publisher(() => ({ Successful: [{ Id: '0', MessageId: 'm-0' }], Failed: [] }));

    const result = await client.publishBatch(entries(2));

    expect(result.results[1]).toMatchObject({ ok: false, error: { code: 'NoResult' } });
  });
});

describe('the SNS client', () => {
  test('a client given is used as it is', () => {
    const sns = new SNSClient({ region: 'eu-west-1' });
    expect(new EmailPublisher({ topicArn: TOPIC_ARN, sns }).sns).toBe(sns);
  });

  test('a configuration given builds a client with it', async () => {
    const client = new EmailPublisher({ topicArn: TOPIC_ARN, sns: { region: 'ap-southeast-2' } });
    expect(await client.sns.config.region()).toBe('ap-southeast-2');
    client.destroy();
  });
});

describe('priority', () => {
  test('priority high is sent as the String attribute priority, beside the idempotency key', async () => {
    const { client, calls } = publisher();
    await client.publish(message, { idempotencyKey: 'order-1', priority: 'high' });
    expect(calls[0]?.input.MessageAttributes).toEqual({
      'idempotency-key': { DataType: 'String', StringValue: 'order-1' },
      priority: { DataType: 'String', StringValue: 'high' },
    });
  });

  test('without a priority no attribute is sent: the pipeline reads that as normal', async () => {
    const { client, calls } = publisher();
    await client.publish(message);
    expect(calls[0]?.input.MessageAttributes).toBeUndefined();
  });

  test('a priority other than high or normal is refused before anything is sent, naming the attribute', async () => {
    const { client, calls } = publisher();
    const error = await refusal(() => client.publish(message, { priority: 'urgent' as 'high' }));
    expect(error.issues).toEqual([{ field: 'attribute priority', reason: 'must be one of normal, high' }]);
    expect(calls).toHaveLength(0);
  });
});
