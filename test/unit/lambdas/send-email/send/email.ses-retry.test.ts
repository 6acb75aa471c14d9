/**
 * SafeSesRetryStrategy inside a real SESv2Client: the SDK's retry middleware
 * decides the error type and calls the strategy. The HTTP layer is a stub
 * handler in memory (no sockets), so each test counts exactly how many times
 * SES would have been asked to send.
 */
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';
import { classifySesError } from '../../../../../lambdas/send-email/classify';
import { SafeSesRetryStrategy, buildSendEmailInput } from '../../../../../lambdas/send-email/send/email';
import { AmbiguousSendError, RetryableError } from '../../../../../lambdas/kernel/errors';
import { nodeError } from '../../../helpers';

type Reply = { readonly status: number; readonly errorType?: string; readonly body: string } | Error;

/** A request handler that plays `replies` in order and counts the requests. */
function stubHandler(replies: readonly Reply[]) {
  const handler = {
    requests: 0,
    async handle(_request: HttpRequest, _options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
      const reply = replies[handler.requests++];
      if (reply === undefined) throw new Error('the stub ran out of replies');
      if (reply instanceof Error) throw reply;
      return {
        response: {
          statusCode: reply.status,
          headers: {
            'content-type': 'application/json',
            ...(reply.errorType ? { 'x-amzn-errortype': reply.errorType } : {}),
          },
          body: Buffer.from(reply.body),
        },
      };
    },
  };
  return handler;
}

const accepted: Reply = { status: 200, body: '{"MessageId":"ses-message-1"}' };
const throttled: Reply = {
  status: 429,
  errorType: 'TooManyRequestsException',
  body: '{"message":"Maximum sending rate exceeded."}',
};

function clientWith(handler: RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions>) {
  return new SESv2Client({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example-secret' },
    requestHandler: handler,
    // 1 ms base delay: the tests check the decisions, not the waiting.
    retryStrategy: new SafeSesRetryStrategy(3, 1, () => 0),
  });
}

const command = () =>
  new SendEmailCommand(
    buildSendEmailInput(
      { to: ['ada@example.com'], cc: [], bcc: [], replyTo: [], subject: 'S', text: 'T', tags: {} },
      { senderAddress: 'noreply@example.com' },
      'key-1',
    ),
  );

describe('SafeSesRetryStrategy in the SES client', () => {
  test('a throttled send is retried and then succeeds', async () => {
    const handler = stubHandler([throttled, accepted]);

    const output = await clientWith(handler).send(command());

    expect(output.MessageId).toBe('ses-message-1');
    expect(handler.requests).toBe(2);
  });

  test('a refused connection is retried and then succeeds', async () => {
    const handler = stubHandler([nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:443'), accepted]);

    await clientWith(handler).send(command());

    expect(handler.requests).toBe(2);
  });

  test('throttling that persists stops after three attempts and classifies as Throttled', async () => {
    const handler = stubHandler([throttled, throttled, throttled, accepted]);

    const error = await clientWith(handler)
      .send(command())
      .catch((e: unknown) => e);

    expect(handler.requests).toBe(3);
    const failure = classifySesError(error);
    expect(failure).toBeInstanceOf(RetryableError);
    expect(failure.code).toBe('Throttled');
  });

  test('a request timeout is sent once only and classifies as ambiguous', async () => {
    const timeout = nodeError(
      'ETIMEDOUT',
      'a request has exceeded the configured 5000 ms requestTimeout.',
      'TimeoutError',
    );
    const handler = stubHandler([timeout, accepted]);

    const error = await clientWith(handler)
      .send(command())
      .catch((e: unknown) => e);

    expect(handler.requests).toBe(1);
    expect(classifySesError(error)).toBeInstanceOf(AmbiguousSendError);
  });

  test('a connection reset is sent once only', async () => {
    const handler = stubHandler([nodeError('ECONNRESET', 'socket hang up', 'TimeoutError'), accepted]);

    await expect(clientWith(handler).send(command())).rejects.toThrow('socket hang up');
    expect(handler.requests).toBe(1);
  });

  test('a 500 from SES is sent once only and classifies as ambiguous', async () => {
    const handler = stubHandler([{ status: 500, errorType: 'InternalFailure', body: '{"message":"oops"}' }, accepted]);

    const error = await clientWith(handler)
      .send(command())
      .catch((e: unknown) => e);

    expect(handler.requests).toBe(1);
    expect(classifySesError(error)).toBeInstanceOf(AmbiguousSendError);
  });

  test('MessageRejected is not retried', async () => {
    const rejected: Reply = {
      status: 400,
      errorType: 'MessageRejected',
      body: '{"message":"Email address is not verified."}',
    };
    const handler = stubHandler([rejected, accepted]);

    await expect(clientWith(handler).send(command())).rejects.toMatchObject({ name: 'MessageRejected' });
    expect(handler.requests).toBe(1);
  });
});
