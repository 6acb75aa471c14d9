import { createHash } from 'node:crypto';
import type { RetryErrorInfo, RetryErrorType, RetryToken } from '@smithy/types';
import { classifySesError, provesNotSent } from '../../../../../lambdas/send-email/classify';
import {
  DEDUPE_TAG,
  SafeSesRetryStrategy,
  buildSendEmailInput,
  dedupeTagValue,
} from '../../../../../lambdas/send-email/send/email';
import {
  AmbiguousSendError,
  PermanentError,
  RetryableError,
  SystemicError,
  type PipelineError,
} from '../../../../../lambdas/kernel/errors';
import type { EmailMessage } from '../../../../../lambdas/kernel/contract';
import { nodeError } from '../../../helpers';

const sender = { senderAddress: 'noreply@example.com' };
const KEY = 'order-42-shipped';

function email(fields: Partial<EmailMessage>): EmailMessage {
  return { to: ['ada@example.com'], cc: [], bcc: [], replyTo: [], tags: {}, ...fields };
}

// ---------------------------------------------------------------- the SendEmail request

describe('buildSendEmailInput', () => {
  test('builds a simple text email', () => {
    const input = buildSendEmailInput(email({ subject: 'Shipped', text: 'On its way' }), sender, KEY);

    expect(input).toStrictEqual({
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: ['ada@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Shipped', Charset: 'UTF-8' },
          Body: { Text: { Data: 'On its way', Charset: 'UTF-8' } },
        },
      },
      EmailTags: [{ Name: 'dedupe-key', Value: KEY }],
    });
  });

  test.each([
    ['Example Shop', 'Example Shop <noreply@example.com>'],
    ['Shop, Inc.', '"Shop, Inc." <noreply@example.com>'],
    ['Café', '=?UTF-8?B?Q2Fmw6k=?= <noreply@example.com>'],
  ])('senderName %p gives the From address %p, as SES requires', (senderName, from) => {
    const input = buildSendEmailInput(email({ subject: 'S', text: 'T' }), { ...sender, senderName }, KEY);

    expect(input.FromEmailAddress).toBe(from);
  });

  test("v1.3: a team's sender (settled at parse) is the From address, bare; the pipeline's own keeps senderName", () => {
    const named = { ...sender, senderName: 'Example Shop' };
    const team = buildSendEmailInput(email({ subject: 'S', text: 'T', from: 'billing@example.com' }), named, KEY);
    const own = buildSendEmailInput(email({ subject: 'S', text: 'T', from: 'noreply@example.com' }), named, KEY);

    expect(team.FromEmailAddress).toBe('billing@example.com');
    expect(own.FromEmailAddress).toBe('Example Shop <noreply@example.com>');
  });

  test("a team with an SES tenant sends as it (TenantName); another team's key, or a bare key, names none", () => {
    const teams = {
      security: { topicArn: 'arn:security', senders: ['security@example.com'], tenantName: 'mail-ab12-security' },
      billing: { topicArn: 'arn:billing', senders: ['billing@example.com'] },
    };
    const simple = email({ subject: 'S', text: 'T' });
    const security = buildSendEmailInput(simple, { ...sender, teams }, 'security#order-42');
    expect(security.TenantName).toBe('mail-ab12-security');
    // The team travels as a tag beside the key's (a hash: # is outside the tags' alphabet).
    expect(security.EmailTags).toContainEqual({ Name: 'dedupe-team', Value: 'security' });
    expect(buildSendEmailInput(simple, { ...sender, teams }, 'billing#order-42').EmailTags).toContainEqual({
      Name: 'dedupe-team',
      Value: 'billing',
    });
    expect(JSON.stringify(buildSendEmailInput(simple, { ...sender, teams }, 'order-42'))).not.toContain('dedupe-team');
    // ...and the team's own key, when SES takes it as a tag value (status changes and callbacks name it).
    expect(security.EmailTags).toContainEqual({ Name: 'dedupe-team-key', Value: 'order-42' });
    const dotted = buildSendEmailInput(simple, { ...sender, teams }, 'security#order.42');
    expect(dotted.EmailTags?.map((tag) => tag.Name)).toContain('dedupe-team');
    expect(dotted.EmailTags?.map((tag) => tag.Name)).not.toContain('dedupe-team-key');
    expect(buildSendEmailInput(simple, { ...sender, teams }, 'billing#order-42')).not.toHaveProperty('TenantName');
    expect(buildSendEmailInput(simple, { ...sender, teams }, 'order-42')).not.toHaveProperty('TenantName');
    // A bare key that only looks like a team's (not refused without teams) names no tenant either.
    expect(buildSendEmailInput(simple, sender, 'security#order-42')).not.toHaveProperty('TenantName');
  });

  test('builds an html email', () => {
    const input = buildSendEmailInput(email({ subject: 'Shipped', html: '<p>On its way</p>' }), sender, KEY);

    expect(input.Content).toStrictEqual({
      Simple: {
        Subject: { Data: 'Shipped', Charset: 'UTF-8' },
        Body: { Html: { Data: '<p>On its way</p>', Charset: 'UTF-8' } },
      },
    });
  });

  test('builds an email with both text and html bodies', () => {
    const input = buildSendEmailInput(email({ subject: 'S', text: 'T', html: '<p>H</p>' }), sender, KEY);

    expect(input.Content?.Simple?.Body).toStrictEqual({
      Text: { Data: 'T', Charset: 'UTF-8' },
      Html: { Data: '<p>H</p>', Charset: 'UTF-8' },
    });
  });

  test('builds a template email with its data as a JSON string and no Simple content', () => {
    const template = { name: 'order-shipped', data: { order: 42, items: ['book', 'pen'] } };

    const input = buildSendEmailInput(email({ template }), sender, KEY);

    expect(input.Content).toStrictEqual({
      Template: { TemplateName: 'order-shipped', TemplateData: '{"order":42,"items":["book","pen"]}' },
    });
  });

  test('sends a template without data as an empty JSON object', () => {
    const input = buildSendEmailInput(email({ template: { name: 'welcome', data: {} } }), sender, KEY);

    expect(input.Content?.Template?.TemplateData).toBe('{}');
  });

  test('adds cc, bcc and replyTo only when given', () => {
    const input = buildSendEmailInput(
      email({
        subject: 'S',
        text: 'T',
        cc: ['bob@example.com'],
        bcc: ['audit@example.com', 'archive@example.com'],
        replyTo: ['support@example.com'],
      }),
      sender,
      KEY,
    );

    expect(input.Destination).toStrictEqual({
      ToAddresses: ['ada@example.com'],
      CcAddresses: ['bob@example.com'],
      BccAddresses: ['audit@example.com', 'archive@example.com'],
    });
    expect(input.ReplyToAddresses).toStrictEqual(['support@example.com']);
  });

  test('leaves out empty cc, bcc and replyTo lists', () => {
    const input = buildSendEmailInput(email({ subject: 'S', text: 'T' }), sender, KEY);

    expect(input.Destination).not.toHaveProperty('CcAddresses');
    expect(input.Destination).not.toHaveProperty('BccAddresses');
    expect(input).not.toHaveProperty('ReplyToAddresses');
  });

  test('puts the dedupe-key tag first, then the message tags', () => {
    const input = buildSendEmailInput(
      email({ subject: 'S', text: 'T', tags: { campaign: 'spring', tenant: 'acme' } }),
      sender,
      KEY,
    );

    expect(input.EmailTags).toStrictEqual([
      { Name: DEDUPE_TAG, Value: KEY },
      { Name: 'campaign', Value: 'spring' },
      { Name: 'tenant', Value: 'acme' },
    ]);
  });

  test('tags a key outside the SES tag alphabet by its hash', () => {
    const input = buildSendEmailInput(email({ subject: 'S', text: 'T' }), sender, 'order:42');

    expect(input.EmailTags?.[0]).toStrictEqual({ Name: 'dedupe-key', Value: dedupeTagValue('order:42') });
    expect(input.EmailTags?.[0]?.Value).toMatch(/^sha256-/);
  });

  test('sets the configuration set when one is configured', () => {
    const input = buildSendEmailInput(
      email({ subject: 'S', text: 'T' }),
      { ...sender, configurationSetName: 'email-events' },
      KEY,
    );

    expect(input.ConfigurationSetName).toBe('email-events');
  });

  test('leaves out the configuration set when none is configured', () => {
    expect(buildSendEmailInput(email({ subject: 'S', text: 'T' }), sender, KEY)).not.toHaveProperty(
      'ConfigurationSetName',
    );
  });

  test('leaves out the configuration set when it is an empty string', () => {
    expect(
      buildSendEmailInput(email({ subject: 'S', text: 'T' }), { ...sender, configurationSetName: '' }, KEY),
    ).not.toHaveProperty('ConfigurationSetName');
  });

  test('copies the address lists, so the request does not share arrays with the message', () => {
    const message = email({ subject: 'S', text: 'T' });

    expect(buildSendEmailInput(message, sender, KEY).Destination?.ToAddresses).not.toBe(message.to);
  });
});

describe('dedupeTagValue', () => {
  test('keeps a key made of letters, digits, _ and -', () => {
    expect(dedupeTagValue('Order_42-shipped')).toBe('Order_42-shipped');
  });

  test('hashes a key with other characters to sha256-<hex>', () => {
    const expected = `sha256-${createHash('sha256').update('5f3c:order/42', 'utf8').digest('hex')}`;

    expect(dedupeTagValue('5f3c:order/42')).toBe(expected);
  });

  test('hashes a key longer than 256 characters', () => {
    expect(dedupeTagValue('k'.repeat(257))).toMatch(/^sha256-[0-9a-f]{64}$/);
  });

  test('keeps a key of exactly 256 allowed characters', () => {
    expect(dedupeTagValue('k'.repeat(256))).toBe('k'.repeat(256));
  });

  test('gives different keys different hashed values', () => {
    expect(dedupeTagValue('a b')).not.toBe(dedupeTagValue('a c'));
  });

  test('hashes a key that looks like a hashed value itself, so two keys never share a tag value or ledger item', () => {
    const hashed = dedupeTagValue('order.1');

    expect(hashed).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(dedupeTagValue(hashed)).not.toBe(hashed);
    expect(dedupeTagValue(hashed)).toMatch(/^sha256-[0-9a-f]{64}$/);
  });

  test('hashes any key that starts with sha256-, whatever follows', () => {
    expect(dedupeTagValue('sha256-x')).toBe(`sha256-${createHash('sha256').update('sha256-x', 'utf8').digest('hex')}`);
  });

  test('keeps a key that only contains sha256- further in, or in other case', () => {
    expect(dedupeTagValue('order-sha256-1')).toBe('order-sha256-1');
    expect(dedupeTagValue('SHA256-1')).toBe('SHA256-1');
  });
});

// ---------------------------------------------------------------- classification

/** An error shaped like the SDK's service exceptions. */
function sesError(name: string, message: string, status: number, fault: 'client' | 'server' = 'client') {
  return Object.assign(new Error(message), { name, $fault: fault, $metadata: { httpStatusCode: status } });
}

/** The error the Node HTTP handler raises when the connection timeout fires before a socket connects. */
const connectionTimeout = Object.assign(
  new Error(
    '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 1000 ms.',
  ),
  { name: 'TimeoutError' },
);

/** The error the Node HTTP handler raises when the request timeout fires (after the request was sent). */
const requestTimeout = Object.assign(
  new Error('@smithy/node-http-handler - [ERROR] a request has exceeded the configured 5000 ms requestTimeout.'),
  { name: 'TimeoutError', code: 'ETIMEDOUT' },
);

describe('classifySesError', () => {
  function expectClass(error: unknown, type: new (...args: never[]) => PipelineError, code: string) {
    const failure = classifySesError(error);
    expect(failure).toBeInstanceOf(type);
    expect(failure.code).toBe(code);
    expect(failure.cause).toBe(error);
    return failure;
  }

  test('addresses SES quotes in its message are masked in the reason', () => {
    const failure = classifySesError(
      sesError(
        'MessageRejected',
        'Email address is not verified. The following identities failed: ada.lovelace@example.com, <bob@example.org>',
        400,
      ),
    );

    expect(failure.message).toContain('a***@example.com');
    expect(failure.message).toContain('b***@example.org');
    expect(failure.message).not.toContain('lovelace');
    expect(failure.message).not.toContain('bob@');
  });

  test.each(['MessageRejected', 'BadRequestException', 'NotFoundException', 'MailFromDomainNotVerifiedException'])(
    '%s is permanent, with its name as the code',
    (name) => {
      const failure = expectClass(sesError(name, 'refused', 400), PermanentError, name);
      expect(failure.failureClass).toBe('permanent');
    },
  );

  test('TooManyRequestsException is retryable as Throttled', () => {
    const failure = expectClass(
      sesError('TooManyRequestsException', 'Maximum sending rate exceeded.', 429),
      RetryableError,
      'Throttled',
    );
    expect(failure.failureClass).toBe('retryable');
  });

  test('a plain 429 is retryable as Throttled', () => {
    expectClass(sesError('UnknownError', 'slow down', 429), RetryableError, 'Throttled');
  });

  test('TooManyRequestsException saying "Daily message quota exceeded" is systemic', () => {
    const failure = expectClass(
      sesError('TooManyRequestsException', 'Daily message quota exceeded.', 429),
      SystemicError,
      'DailyQuotaExceeded',
    );
    expect(failure.failureClass).toBe('systemic');
  });

  test.each(['AccountSuspendedException', 'SendingPausedException'])('%s is systemic', (name) => {
    expectClass(sesError(name, 'cannot send', 400), SystemicError, name);
  });

  test('ECONNREFUSED is retryable: nothing reached SES', () => {
    expectClass(nodeError('ECONNREFUSED'), RetryableError, 'SesUnreachable');
  });

  test('ECONNREFUSED renamed TimeoutError by the HTTP handler is still retryable', () => {
    expectClass(nodeError('ECONNREFUSED', 'connect ECONNREFUSED', 'TimeoutError'), RetryableError, 'SesUnreachable');
  });

  test.each(['ENOTFOUND', 'EAI_AGAIN'])('%s (DNS) is retryable', (code) => {
    expectClass(nodeError(code), RetryableError, 'SesUnreachable');
  });

  test('the HTTP handler connection timeout ("did not establish a connection") is retryable', () => {
    expectClass(connectionTimeout, RetryableError, 'SesUnreachable');
  });

  test('a request timeout is ambiguous: SES may have accepted the email', () => {
    const failure = expectClass(requestTimeout, AmbiguousSendError, 'AmbiguousSend');
    expect(failure.failureClass).toBe('ambiguous');
  });

  test('ECONNRESET is ambiguous', () => {
    expectClass(nodeError('ECONNRESET', 'socket hang up', 'TimeoutError'), AmbiguousSendError, 'AmbiguousSend');
  });

  test('a 500 from SES is ambiguous', () => {
    expectClass(sesError('InternalFailure', 'internal error', 500, 'server'), AmbiguousSendError, 'AmbiguousSend');
  });

  test('a 503 from SES is ambiguous', () => {
    expectClass(sesError('ServiceUnavailable', 'unavailable', 503, 'server'), AmbiguousSendError, 'AmbiguousSend');
  });

  test('a client-side 4xx such as AccessDenied is retryable (an operator can fix it)', () => {
    expectClass(sesError('AccessDeniedException', 'not authorized', 403), RetryableError, 'AccessDeniedException');
  });

  test('something that is not an Error is ambiguous, not dropped', () => {
    expect(classifySesError('boom')).toBeInstanceOf(AmbiguousSendError);
  });

  test('a PipelineError passes through unchanged', () => {
    const original = new PermanentError('InvalidMessage', 'bad');

    expect(classifySesError(original)).toBe(original);
  });

  test('the reason names the SES error and its message', () => {
    expect(classifySesError(sesError('MessageRejected', 'Email address is not verified.', 400)).message).toContain(
      'MessageRejected: Email address is not verified.',
    );
  });
});

describe('provesNotSent', () => {
  test('is true for a refused connection', () => {
    expect(provesNotSent(nodeError('ECONNREFUSED'))).toBe(true);
  });

  test('is true for the connection timeout', () => {
    expect(provesNotSent(connectionTimeout)).toBe(true);
  });

  test('is false for the request timeout', () => {
    expect(provesNotSent(requestTimeout)).toBe(false);
  });

  test('is false for a reset connection', () => {
    expect(provesNotSent(nodeError('ECONNRESET'))).toBe(false);
  });

  test('is false for undefined', () => {
    expect(provesNotSent(undefined)).toBe(false);
  });
});

// ---------------------------------------------------------------- the SDK retry policy

describe('SafeSesRetryStrategy', () => {
  function info(errorType: RetryErrorType, error: unknown): RetryErrorInfo {
    return { errorType, error: error as RetryErrorInfo['error'] };
  }

  const throttled = info('THROTTLING', sesError('TooManyRequestsException', 'Maximum sending rate exceeded.', 429));

  /** Retries until the strategy refuses; returns the tokens it granted. */
  async function retriesGranted(strategy: SafeSesRetryStrategy, errorInfo: RetryErrorInfo): Promise<RetryToken[]> {
    let token = await strategy.acquireInitialRetryToken();
    const granted: RetryToken[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        token = await strategy.refreshRetryTokenForRetry(token, errorInfo);
      } catch {
        return granted;
      }
      granted.push(token);
    }
    throw new Error('the strategy never stopped retrying');
  }

  test('the first attempt starts at once, with no retries counted', async () => {
    const token = await new SafeSesRetryStrategy().acquireInitialRetryToken();

    expect(token.getRetryCount()).toBe(0);
    expect(token.getRetryDelay()).toBe(0);
  });

  test('retries throttling until maxAttempts attempts in all', async () => {
    const granted = await retriesGranted(new SafeSesRetryStrategy(4, 100, () => 0.5), throttled);

    expect(granted.map((t) => t.getRetryCount())).toEqual([1, 2, 3]);
  });

  test('with the default maxAttempts, makes three attempts in all', async () => {
    expect(await retriesGranted(new SafeSesRetryStrategy(), throttled)).toHaveLength(2);
  });

  test('retries a refused connection: it proves nothing was sent', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);

    expect(await retriesGranted(strategy, info('TRANSIENT', nodeError('ECONNREFUSED')))).toHaveLength(2);
  });

  test('retries the connection timeout: no socket ever connected', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);

    expect(await retriesGranted(strategy, info('TRANSIENT', connectionTimeout))).toHaveLength(2);
  });

  test('refuses a TRANSIENT request timeout', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();

    await expect(strategy.refreshRetryTokenForRetry(token, info('TRANSIENT', requestTimeout))).rejects.toThrow();
  });

  test('refuses a TRANSIENT connection reset', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();
    const reset = nodeError('ECONNRESET', 'socket hang up', 'TimeoutError');

    await expect(strategy.refreshRetryTokenForRetry(token, info('TRANSIENT', reset))).rejects.toThrow();
  });

  test('refuses a SERVER_ERROR', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();
    const error = sesError('InternalFailure', 'internal error', 500, 'server');

    await expect(strategy.refreshRetryTokenForRetry(token, info('SERVER_ERROR', error))).rejects.toThrow();
  });

  test('refuses a CLIENT_ERROR such as MessageRejected', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();
    const error = sesError('MessageRejected', 'rejected', 400);

    await expect(strategy.refreshRetryTokenForRetry(token, info('CLIENT_ERROR', error))).rejects.toThrow();
  });

  test('refuses throttling that is the daily quota: waiting milliseconds cannot help', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();
    const quota = sesError('TooManyRequestsException', 'Daily message quota exceeded.', 429);

    await expect(strategy.refreshRetryTokenForRetry(token, info('THROTTLING', quota))).rejects.toThrow();
  });

  test('refuses a TRANSIENT error that comes without the error itself', async () => {
    const strategy = new SafeSesRetryStrategy(3, 100, () => 0);
    const token = await strategy.acquireInitialRetryToken();

    await expect(strategy.refreshRetryTokenForRetry(token, { errorType: 'TRANSIENT' })).rejects.toThrow();
  });

  test.each([0, 0.5, 0.999])('delays grow with each retry (random() = %s)', async (r) => {
    const delays = (await retriesGranted(new SafeSesRetryStrategy(5, 100, () => r), throttled)).map((t) =>
      t.getRetryDelay(),
    );

    expect(delays).toHaveLength(4);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1]!);
  });

  test('each delay lies in the upper half of its doubling window', async () => {
    const lowest = await retriesGranted(new SafeSesRetryStrategy(4, 100, () => 0), throttled);
    const highest = await retriesGranted(new SafeSesRetryStrategy(4, 100, () => 1), throttled);

    // Windows: 200, 400 and 800 ms for retries 1, 2 and 3.
    expect(lowest.map((t) => t.getRetryDelay())).toEqual([100, 200, 400]);
    expect(highest.map((t) => t.getRetryDelay())).toEqual([200, 400, 800]);
  });

  test('uses the injected random for jitter', async () => {
    const [first] = await retriesGranted(new SafeSesRetryStrategy(2, 100, () => 0.5), throttled);

    expect(first?.getRetryDelay()).toBe(150);
  });
});
