/**
 * The local stack behaves the way the pipeline relies on (the claims in DESIGN.md, "Local
 * stack"), and the fault proxy turns into the errors the real SDK raises. Runs against the
 * emulators that global-setup.ts started; every test uses its own names and recipients,
 * since other test files share the emulators at the same time (so: never clear the mailbox).
 */
import { randomBytes } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { CreateTopicCommand, PublishCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { readMailbox } from '../../tools/dev/local/emulators';
import { addressedTo, mailTo } from './support';
import { LOCAL_AWS_ENV } from '../../tools/dev/local/emulator-config';
import {
  delay,
  down,
  dynamoDbThrottle,
  everyNth,
  forwardThenReset,
  onlyOperation,
  sesThrottle,
  startFaultProxy,
  type FaultProxy,
} from '../../tools/dev/local/fault-proxy';
import { waitFor } from '../../tools/dev/local/processes';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: did the integration globalSetup run?`);
  return value;
}

const DYNAMODB = env('EMULATOR_DYNAMODB_ENDPOINT');
const SQS = env('EMULATOR_SQS_ENDPOINT');
const SNS = env('EMULATOR_SNS_ENDPOINT');
const SES = env('EMULATOR_SES_ENDPOINT');

/**
 * Region and credentials are left to the SDK's default chain on purpose: they must come from
 * the environment the global set-up gave the workers. One attempt, so that every failure the
 * proxy injects reaches the test as it is.
 */
function clientConfig(endpoint: string, requestTimeout = 5000) {
  return {
    endpoint,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout, throwOnRequestTimeout: true },
  };
}

function uid(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** Settles the promise and returns its rejection, failing if it resolved. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error as Error & Record<string, unknown>;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but the call succeeded');
}

/** Polls until `read` returns a value; fails after `timeoutMs`. */
async function eventually<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  let found: T | undefined;
  await waitFor(
    async () => {
      found = await read();
      return found !== undefined;
    },
    { what, timeoutMs, intervalMs: 50 },
  );
  return found as T;
}

describe('integration global set-up', () => {
  test('gives the workers the emulator endpoints, a region and fake credentials', () => {
    for (const endpoint of [DYNAMODB, SQS, SNS, SES]) expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(SNS).toBe(SQS);
    for (const [name, value] of Object.entries(LOCAL_AWS_ENV)) expect(process.env[name]).toBe(value);
  });
});

describe('DynamoDB Local', () => {
  const ddb = new DynamoDBClient(clientConfig(DYNAMODB));
  const table = uid('emulators');

  beforeAll(async () => {
    await ddb.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  });
  afterAll(() => ddb.destroy());

  test('returns the old item when a conditional PutItem fails with ReturnValuesOnConditionCheckFailure ALL_OLD', async () => {
    const old: Record<string, AttributeValue> = { id: { S: 'key-1' }, status: { S: 'COMPLETED' } };
    await ddb.send(new PutItemCommand({ TableName: table, Item: old }));

    const error = await rejectionOf(
      ddb.send(
        new PutItemCommand({
          TableName: table,
          Item: { id: { S: 'key-1' }, status: { S: 'INPROGRESS' } },
          ConditionExpression: 'attribute_not_exists(id)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );

    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect((error as unknown as ConditionalCheckFailedException).Item).toEqual(old);
  });

  test('accepts a TTL setting on a table', async () => {
    await ddb.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { Enabled: true, AttributeName: 'expiration' },
      }),
    );

    const ttl = await ddb.send(new DescribeTimeToLiveCommand({ TableName: table }));

    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiration' });
  });
});

describe('fauxqs (SNS and SQS)', () => {
  const sqs = new SQSClient(clientConfig(SQS));
  const sns = new SNSClient(clientConfig(SNS));
  afterAll(() => {
    sqs.destroy();
    sns.destroy();
  });

  async function createQueue(name: string, attributes: Record<string, string> = {}) {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error('CreateQueue returned no QueueUrl');
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const arn = Attributes?.QueueArn;
    if (!arn) throw new Error('GetQueueAttributes returned no QueueArn');
    return { url: QueueUrl, arn };
  }

  /** One receive, no waiting: the message if one is visible right now. */
  async function receiveNow(queueUrl: string, visibilityTimeout?: number): Promise<Message | undefined> {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 0,
        VisibilityTimeout: visibilityTimeout,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    return Messages?.[0];
  }

  test('delivers a publish to a subscribed queue as an SNS envelope with MessageId and MessageAttributes', async () => {
    const name = uid('envelope');
    const queue = await createQueue(name);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
    // RawMessageDelivery left at its default (off), as in the pipeline.
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queue.arn }));

    const body = JSON.stringify({ to: ['a@example.com'], subject: 'hi', text: 'hello' });
    const published = await sns.send(
      new PublishCommand({
        TopicArn,
        Message: body,
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: 'order-42' } },
      }),
    );
    const message = await eventually('the notification in the queue', () => receiveNow(queue.url));

    const envelope: unknown = JSON.parse(message.Body ?? '');
    expect(envelope).toMatchObject({
      Type: 'Notification',
      MessageId: published.MessageId,
      TopicArn,
      Message: body,
      MessageAttributes: { 'idempotency-key': { Type: 'String', Value: 'order-42' } },
    });
    // The SQS message has an id of its own: deduplicating on it would miss SNS redeliveries.
    expect(message.MessageId).not.toBe(published.MessageId);
  });

  test('leaves MessageAttributes and Subject out of the envelope of a publish without them, as SNS does', async () => {
    // The pipeline's key then falls back to the envelope's MessageId. fauxqs 1.x wrote
    // `"Subject": null` and `"MessageAttributes": {}` instead.
    const name = uid('bare-envelope');
    const queue = await createQueue(name);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queue.arn }));

    const published = await sns.send(new PublishCommand({ TopicArn, Message: 'no key' }));
    const message = await eventually('the notification in the queue', () => receiveNow(queue.url));

    const envelope = JSON.parse(message.Body ?? '') as Record<string, unknown>;
    expect(envelope).toMatchObject({ Type: 'Notification', MessageId: published.MessageId, Message: 'no key' });
    expect({ MessageAttributes: 'MessageAttributes' in envelope, Subject: 'Subject' in envelope }).toEqual({
      MessageAttributes: false,
      Subject: false,
    });
  });

  test('moves a message to the DLQ on the receive after maxReceiveCount receives', async () => {
    const name = uid('redrive');
    const dlq = await createQueue(`${name}-dlq`);
    const source = await createQueue(name, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 2 }),
    });
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: source.url, MessageBody: 'poison' }));

    // Visibility 0: each receive hands the message straight back, like a failed attempt.
    const first = await receiveNow(source.url, 0);
    const second = await receiveNow(source.url, 0);
    const third = await receiveNow(source.url, 0);
    const deadLetter = await eventually('the message in the DLQ', () => receiveNow(dlq.url));

    expect([first?.MessageId, second?.MessageId, third]).toEqual([MessageId, MessageId, undefined]);
    expect(deadLetter).toMatchObject({ MessageId, Body: 'poison' });
  });

  test('makes a received message visible again when ChangeMessageVisibility sets its timeout to 0', async () => {
    const queue = await createQueue(uid('visibility'), { VisibilityTimeout: '30' });
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'again' }));
    const received = await receiveNow(queue.url);
    expect(await receiveNow(queue.url)).toBeUndefined(); // hidden for 30 s

    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queue.url,
        ReceiptHandle: received?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const again = await receiveNow(queue.url);

    expect(again?.MessageId).toBe(MessageId);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
  });
});

describe('aws-ses-v2-local', () => {
  const ses = new SESv2Client(clientConfig(SES));
  afterAll(() => ses.destroy());

  test('stores a SendEmail in the mailbox under the MessageId it returned', async () => {
    const to = `${uid('mailbox')}@example.com`;
    const { MessageId } = await ses.send(sendEmail(to, 'Welcome'));

    const { emails } = await readMailbox(SES);

    expect(addressedTo(emails, to)).toEqual([
      expect.objectContaining({ messageId: MessageId, from: 'sender@example.com', subject: 'Welcome' }),
    ]);
  });
});

function sendEmail(to: string, subject: string): SendEmailCommand {
  return new SendEmailCommand({
    FromEmailAddress: 'sender@example.com',
    Destination: { ToAddresses: [to] },
    Content: { Simple: { Subject: { Data: subject }, Body: { Text: { Data: 'Hello' } } } },
    EmailTags: [{ Name: 'kind', Value: 'test' }],
  });
}

/**
 * A reset as the SDK reports it: no HTTP status. Outside jest it is `{ name: 'TimeoutError',
 * code: 'ECONNRESET', message: 'socket hang up' }`. Inside jest the SDK's retry middleware
 * sees Node's error from another realm (`instanceof Error` is false there) and wraps it as
 * a plain Error "AWS SDK error wrapper for TimeoutError: socket hang up", without `code`.
 */
function expectNetworkError(error: Error & Record<string, unknown>): void {
  expect(error.message).toMatch(/socket hang up|ECONNRESET/);
  expect(error.$metadata).not.toHaveProperty('httpStatusCode');
}

describe('fault proxy', () => {
  let proxy: FaultProxy | undefined;
  const clients: { destroy(): void }[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await proxy?.close();
    proxy = undefined;
  });

  async function sesBehindProxy(requestTimeout?: number) {
    proxy = await startFaultProxy({ target: SES });
    const client = new SESv2Client(clientConfig(proxy.endpoint, requestTimeout));
    clients.push(client);
    return { proxy, ses: client };
  }

  async function dynamoDbBehindProxy() {
    proxy = await startFaultProxy({ target: DYNAMODB });
    const client = new DynamoDBClient(clientConfig(proxy.endpoint));
    clients.push(client);
    return { proxy, ddb: client };
  }

  test('answering 429 makes the SESv2 client raise TooManyRequestsException, and nothing is sent', async () => {
    const { proxy, ses } = await sesBehindProxy();
    proxy.set(sesThrottle());
    const to = `${uid('throttled')}@example.com`;

    const error = await rejectionOf(ses.send(sendEmail(to, 'Throttled')));

    expect(error.name).toBe('TooManyRequestsException');
    expect(error.$metadata).toMatchObject({ httpStatusCode: 429 });
    expect(proxy.counts()).toMatchObject({ status: 1, total: 1 });
    expect(await mailTo(SES, to)).toEqual([]);
  });

  test('answering 400 ProvisionedThroughputExceededException makes the DynamoDB client raise it', async () => {
    const { proxy, ddb } = await dynamoDbBehindProxy();
    proxy.set(dynamoDbThrottle());

    const error = await rejectionOf(ddb.send(new GetItemCommand({ TableName: 'any', Key: { id: { S: 'x' } } })));

    expect(error.name).toBe('ProvisionedThroughputExceededException');
    expect(error.$metadata).toMatchObject({ httpStatusCode: 400 });
  });

  test('down gives the DynamoDB client a network error, with no HTTP status', async () => {
    const { proxy, ddb } = await dynamoDbBehindProxy();
    proxy.set(down());

    const error = await rejectionOf(ddb.send(new GetItemCommand({ TableName: 'any', Key: { id: { S: 'x' } } })));

    expectNetworkError(error);
    expect(proxy.counts()).toMatchObject({ down: 1, total: 1 });
  });

  test('forwardThenReset leaves the email sent while the SESv2 client sees a network error', async () => {
    const { proxy, ses } = await sesBehindProxy();
    proxy.set(forwardThenReset());
    const to = `${uid('ambiguous')}@example.com`;

    const error = await rejectionOf(ses.send(sendEmail(to, 'Ambiguous')));

    expectNetworkError(error);
    expect(await mailTo(SES, to)).toEqual([expect.objectContaining({ subject: 'Ambiguous' })]);
  });

  test('a delay longer than the client timeout still delivers the email after the client gave up', async () => {
    const { proxy, ses } = await sesBehindProxy(300);
    proxy.set(delay(1000));
    const to = `${uid('late')}@example.com`;

    const error = await rejectionOf(ses.send(sendEmail(to, 'Late')));
    expect(error.name).toBe('TimeoutError');
    expect(await mailTo(SES, to)).toEqual([]);

    const emails = await eventually('the late email in the mailbox', async () => {
      const found = await mailTo(SES, to);
      return found.length > 0 ? found : undefined;
    });
    expect(emails).toEqual([expect.objectContaining({ subject: 'Late' })]);
  });

  test('a chooser can fail every second request', async () => {
    const { proxy, ses } = await sesBehindProxy();
    proxy.set(everyNth(2, sesThrottle()));
    const base = uid('alternate');

    const outcomes: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const sent = await ses.send(sendEmail(`${base}-${i}@example.com`, 'Alternate')).then(
        () => 'sent',
        (error: Error) => error.name,
      );
      outcomes.push(sent);
    }

    expect(outcomes).toEqual(['sent', 'TooManyRequestsException', 'sent', 'TooManyRequestsException']);
    expect(proxy.counts()).toMatchObject({ pass: 2, status: 2, total: 4 });
  });

  test('a chooser can fail only one operation', async () => {
    const { proxy, ddb } = await dynamoDbBehindProxy();
    proxy.set(onlyOperation('PutItem', dynamoDbThrottle()));
    const key = { id: { S: 'x' } };

    const read = await ddb.send(new GetItemCommand({ TableName: 'missing-table', Key: key })).then(
      () => 'ok',
      (error: Error) => error.name,
    );
    const write = await rejectionOf(ddb.send(new PutItemCommand({ TableName: 'missing-table', Item: key })));

    // The read reached DynamoDB Local (which knows no such table); the write never did.
    expect(read).toBe('ResourceNotFoundException');
    expect(write.name).toBe('ProvisionedThroughputExceededException');
    expect(proxy.log().map((entry) => [entry.operation, entry.behaviour])).toEqual([
      ['GetItem', 'pass'],
      ['PutItem', 'status'],
    ]);
  });
});
