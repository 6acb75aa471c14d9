import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { EmailPublisher, InvalidMessageError, checkEmail } from '../../../lib/publisher';
import {
  cancelAtCancelUrl,
  deliveryUrl,
  regionOfFunctionUrl,
  signedHeaders,
  StatusUrlError,
} from '../../../lib/status-url';
import { startCancellingEndpoint } from '../helpers';

/** node:crypto as the Checksum SignatureV4 takes (SHA-256, or HMAC-SHA256 with a secret). */
class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: Uint8Array | string) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', this.secret);
  }
  update(data: Uint8Array | string): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = new Date(Date.UTC(2026, 11, 24, 8, 0, 0));

async function oracle(url: URL, sessionToken?: string): Promise<string> {
  const signer = new SignatureV4({
    service: 'lambda',
    region: 'eu-west-1',
    credentials: { ...credentials, ...(sessionToken ? { sessionToken } : {}) },
    sha256: Sha256 as never,
  });
  const signed = await signer.sign(
    {
      method: 'DELETE',
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      headers: {
        host: url.host,
        'x-amz-content-sha256': createHash('sha256').update('').digest('hex'),
      },
      query: Object.fromEntries(url.searchParams.entries()),
      body: undefined,
    } as never,
    { signingDate: now },
  );
  return (signed as unknown as { headers: Record<string, string> }).headers.authorization ?? '';
}

describe('status URL requests: SigV4 for lambda (checked against the SDK’s own signer)', () => {
  test.each(['order-42', 'order/42 👋', "it's (quoted)*", 'Grüße'])(
    'signs DELETE <StatusUrl>%j as the SDK does',
    async (key) => {
      const url = deliveryUrl('https://abc123.lambda-url.eu-west-1.on.aws/deliveries/', key);
      const ours = await signedHeaders('DELETE', url, { credentials, region: 'us-east-1', now });
      expect(ours.authorization).toBe(await oracle(url));
      expect(ours.authorization).toContain('/eu-west-1/lambda/aws4_request');
    },
  );

  test("a team's query is signed: the signature is the SDK's, and not the one without it", async () => {
    const base = 'https://abc123.lambda-url.eu-west-1.on.aws/deliveries/';
    const url = deliveryUrl(base, 'order-42', 'billing');
    const ours = await signedHeaders('DELETE', url, { credentials, region: 'us-east-1', now });
    expect(ours.authorization).toBe(await oracle(url));
    const bare = await signedHeaders('DELETE', deliveryUrl(base, 'order-42'), { credentials, region: 'x', now });
    expect(ours.authorization).not.toBe(bare.authorization);
  });

  test('a session token is signed and sent', async () => {
    const url = deliveryUrl('https://abc123.lambda-url.eu-west-1.on.aws/deliveries/', 'order-42');
    const ours = await signedHeaders('DELETE', url, {
      credentials: { ...credentials, sessionToken: 'TOKEN' },
      region: 'x',
      now,
    });
    expect(ours['x-amz-security-token']).toBe('TOKEN');
    expect(ours.authorization).toBe(await oracle(url, 'TOKEN'));
  });

  test('the region comes from a function URL’s host, else from the client', () => {
    expect(regionOfFunctionUrl(new URL('https://abc.lambda-url.ap-south-2.on.aws/'))).toBe('ap-south-2');
    expect(regionOfFunctionUrl(new URL('http://127.0.0.1:8010/deliveries/'))).toBeUndefined();
  });
});

describe('EmailPublisher: sendAt and cancel', () => {
  const message = { to: 'ada@example.com', subject: 'Hi', text: 'Hello' };

  test('the sendAt option puts an RFC 3339 instant in the message (a Date as UTC)', () => {
    const inAnHour = new Date(Date.now() + 3_600_000);
    expect(checkEmail(message, { sendAt: inAnHour }).sendAt).toBe(inAnHour.toISOString());
  });

  test('a sendAt beyond the default 24 h ahead is refused before publishing, naming the field', () => {
    const error = (() => {
      try {
        checkEmail(message, { sendAt: new Date(Date.now() + 25 * 3_600_000) });
      } catch (e) {
        return e as InvalidMessageError;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error?.issues[0]?.field).toBe('sendAt');
  });

  test('a sendAt option that disagrees with the message’s own is refused', () => {
    expect(() =>
      checkEmail({ ...message, sendAt: '2026-12-24T08:00:00Z' }, { sendAt: '2026-12-24T09:00:00Z' }),
    ).toThrow('sendAt: is given twice');
  });

  test('cancel(key) sends one signed DELETE to <cancelUrl><key> and resolves with the outcome, 409 included', async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((request, response) => {
      seen.push(request);
      response.writeHead(409, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ outcome: 'too-late', report: { key: 'order/42', status: 'sent', events: [] } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const publisher = new EmailPublisher({
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:emails',
      sns: { region: 'eu-west-1', credentials },
      cancelUrl: `http://127.0.0.1:${port}/deliveries/`,
    });
    try {
      const result = await publisher.cancel('order/42');
      expect(result).toMatchObject({ outcome: 'too-late', report: { status: 'sent' } });
      expect(seen[0]?.method).toBe('DELETE');
      expect(seen[0]?.url).toBe('/deliveries/order%2F42');
      expect(seen[0]?.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\//,
      );
    } finally {
      publisher.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("a team's client cancels with ?team=NAME; a name that cannot be a team is refused when it is built", async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((request, response) => {
      seen.push(request);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ outcome: 'cancelled', report: { key: 'x', status: 'cancelled', events: [] } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const props = {
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:billing',
      sns: { region: 'eu-west-1', credentials },
      cancelUrl: `http://127.0.0.1:${port}/deliveries/`,
    };
    const publisher = new EmailPublisher({ ...props, team: 'billing' });
    try {
      await publisher.cancel('order-42');
      expect(seen[0]?.url).toBe('/deliveries/order-42?team=billing');
      expect(() => new EmailPublisher({ ...props, team: 'Billing' })).toThrow('"Billing" cannot be a team');
    } finally {
      publisher.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('cancel without a cancelUrl says what it needs', async () => {
    const publisher = new EmailPublisher({
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:emails',
      sns: { region: 'eu-west-1' },
    });
    await expect(publisher.cancel('order-42')).rejects.toThrow('needs the cancelUrl prop');
    publisher.destroy();
  });
});

describe('cancel at the cancel URL', () => {
  const lookup = async (key: string) => ({ key, status: 'scheduled' as const, events: [] });
  const context = { credentials, region: 'eu-west-1' };

  test('a signed DELETE to <CancelUrl><key> cancels; the same DELETE to the status URL is refused 405, naming CancelUrl', async () => {
    const { server, cancelled } = await startCancellingEndpoint(lookup);
    try {
      const result = await cancelAtCancelUrl(`${server.cancelUrl}/deliveries/`, 'order/42', context);
      expect(result).toMatchObject({ outcome: 'cancelled', report: { key: 'order/42' } });
      const refused = cancelAtCancelUrl(`${server.url}/deliveries/`, 'order-43', context);
      await expect(refused).rejects.toBeInstanceOf(StatusUrlError);
      await expect(refused).rejects.toMatchObject({ statusCode: 405, message: expect.stringContaining('CancelUrl') });
      expect(cancelled).toEqual(['order/42']);
    } finally {
      await server.close();
    }
  });

  test("a team's cancel names the team in the query: the key cancelled is <team>#<key>", async () => {
    const { server, cancelled } = await startCancellingEndpoint(lookup);
    try {
      const result = await cancelAtCancelUrl(`${server.cancelUrl}/deliveries/`, 'order-7', context, {
        team: 'billing',
      });
      expect(result).toMatchObject({ outcome: 'cancelled', report: { key: 'billing#order-7' } });
      // The timeout alone, as callers passed it before teams, still works.
      await cancelAtCancelUrl(`${server.cancelUrl}/deliveries/`, 'order-8', context, 5000);
      expect(cancelled).toEqual(['billing#order-7', 'order-8']);
    } finally {
      await server.close();
    }
  });

  test('deliveryUrl puts the team in the query, the key in the path', () => {
    const url = deliveryUrl('https://abc123.lambda-url.eu-west-1.on.aws/deliveries/', 'a/b', 'security');
    expect(url.pathname).toBe('/deliveries/a%2Fb');
    expect(url.search).toBe('?team=security');
  });
});
