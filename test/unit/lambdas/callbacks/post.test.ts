/**
 * One callback try against a real server on 127.0.0.1: the answer's meaning, the timeout, and the
 * SSRF guard (on AWS a URL naming or resolving to a loopback or private address is not called).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postCallback } from '../../../../lambdas/callbacks/post';

let server: Server;
let base: string;
const calls: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      calls.push({ headers: request.headers, body });
      if (request.url === '/slow') return; // never answers
      if (request.url === '/busy') return void response.writeHead(429, { 'retry-after': '7' }).end();
      if (request.url === '/moved') return void response.writeHead(302, { location: '/ok' }).end();
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { timeoutMs: 2000, allowPrivateAddresses: true };

test('a 2xx delivers; the body and headers go as given, with JSON content type', async () => {
  const result = await postCallback(`${base}/ok`, { 'webhook-id': 'msg_1' }, '{"a":1}', local);
  expect(result).toEqual({ kind: 'delivered', status: 200 });
  expect(calls.at(-1)).toMatchObject({
    body: '{"a":1}',
    headers: { 'webhook-id': 'msg_1', 'content-type': 'application/json' },
  });
});

test('429 is retried with its Retry-After; a redirect is not followed', async () => {
  expect(await postCallback(`${base}/busy`, {}, '{}', local)).toEqual({
    kind: 'retry',
    result: 'HTTP 429 Too Many Requests',
    retryAfterSeconds: 7,
  });
  const before = calls.length;
  expect(await postCallback(`${base}/moved`, {}, '{}', local)).toMatchObject({ kind: 'refused' });
  expect(calls.length).toBe(before + 1);
});

test('no answer within the timeout is retried', async () => {
  expect(await postCallback(`${base}/slow`, {}, '{}', { ...local, timeoutMs: 300 })).toEqual({
    kind: 'retry',
    result: 'timeout after 300 ms',
  });
});

test('a refused connection is retried', async () => {
  const result = await postCallback('http://127.0.0.1:1/', {}, '{}', local);
  expect(result).toMatchObject({ kind: 'retry', result: 'connection failed (ECONNREFUSED)' });
});

describe('on AWS (no private addresses)', () => {
  const aws = { timeoutMs: 2000, allowPrivateAddresses: false };

  test('http:// is not called', async () => {
    const before = calls.length;
    expect(await postCallback(`${base}/ok`, {}, '{}', aws)).toEqual({
      kind: 'refused',
      result: 'only https:// URLs are called',
    });
    expect(calls.length).toBe(before);
  });

  test.each(['https://127.0.0.1/', 'https://169.254.169.254/latest', 'https://[::1]/', 'https://10.0.0.8/'])(
    '%s is refused before any connection',
    async (url) => {
      expect(await postCallback(url, {}, '{}', aws)).toMatchObject({
        kind: 'refused',
        result: expect.stringContaining('private, loopback, link-local or reserved'),
      });
    },
  );

  test('a name that resolves to a loopback address is refused at connect time', async () => {
    expect(await postCallback('https://localhost/', {}, '{}', aws)).toMatchObject({
      kind: 'refused',
      result: expect.stringContaining('localhost resolves to'),
    });
  });
});
