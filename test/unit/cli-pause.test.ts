/**
 * pause / resume: arguments, what "paused" means over several event sources, the calls to
 * Lambda (every SQS mapping of the send function, only those not already as asked), and the
 * Signature Version 4 the CLI signs them with (checked against the SDK's own signer).
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import { sign } from '../../lib/cli/aws-rest';
import { run } from '../../lib/cli/main';
import { pauseState, readPause, switchSending } from '../../lib/cli/pause';
import { formatPauseState } from '../../lib/cli/pause-command';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('arguments', () => {
  test('--help prints the usage and exits 0; stray arguments and resume --status are usage errors', async () => {
    const help = capture();
    expect(await run(['pause', '--help'], help.io)).toBe(0);
    expect(help.out.join('\n')).toContain('email-pipeline pause --status');
    const stray = capture();
    expect(await run(['pause', 'now'], stray.io)).toBe(2);
    expect(stray.err.join('\n')).toContain('unexpected argument "now"');
    const status = capture();
    expect(await run(['resume', '--status'], status.io)).toBe(2);
    expect(status.err.join('\n')).toContain('--status goes with pause');
    const typo = capture();
    expect(await run(['pause', '--stauts'], typo.io)).toBe(2);
    expect(typo.err.join('\n')).toContain('did you mean --status?');
  });
});

describe('paused means no source receives', () => {
  const src = (state: string) => ({ id: state, queue: 'arn:aws:sqs:eu-west-1:1:q', state });
  test('every source off or going off', () => {
    expect(pauseState([src('Disabled'), src('Disabling')]).paused).toBe(true);
    expect(pauseState([src('Disabled'), src('Enabled')]).paused).toBe(false);
    expect(pauseState([src('Enabling')]).paused).toBe(false);
  });
  test('printed with one line per source', () => {
    const lines = formatPauseState(pauseState([src('Disabled')]), 'stack S');
    expect(lines[0]).toBe(
      'Sending is paused on stack S: messages wait in the queue (email-pipeline resume starts again).',
    );
    expect(lines[1]).toMatch(/^ {2}Disabled\s+arn:aws:sqs:eu-west-1:1:q {2}Disabled$/);
  });
});

describe('locally a flag file', () => {
  test('pause writes it, --status reads it, resume removes it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pause-'));
    const at = { kind: 'local' as const, flagFile: path.join(dir, 'send-paused'), queueUrl: 'http://q' };
    try {
      expect((await readPause(at)).paused).toBe(false);
      expect((await switchSending(at, false)).paused).toBe(true);
      expect((await readPause(at)).paused).toBe(true);
      expect((await switchSending(at, true)).paused).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('on AWS: the send function event source mappings', () => {
  const saved = { ...process.env };
  const realFetch = global.fetch;
  afterEach(() => {
    process.env = { ...saved };
    global.fetch = realFetch;
  });

  test('every SQS mapping (all pages) is disabled unless it already is; others are left alone', async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_PROFILE: '' });
    delete process.env.AWS_SESSION_TOKEN;
    const calls: { method: string; url: string; body?: string; auth: string }[] = [];
    global.fetch = (async (url: string, init: RequestInit) => {
      const headers = init.headers as Record<string, string>;
      calls.push({ method: init.method ?? 'GET', url, body: init.body as string, auth: headers.authorization ?? '' });
      const json = (value: unknown) => new Response(JSON.stringify(value), { status: 200 });
      if (init.method === 'PUT') return json({ UUID: url.split('/').pop(), State: 'Disabling' });
      if (!url.includes('Marker=')) {
        return json({
          EventSourceMappings: [
            { UUID: 'u-1', EventSourceArn: 'arn:aws:sqs:eu-west-1:1:work', State: 'Enabled' },
            { UUID: 'u-k', EventSourceArn: 'arn:aws:kinesis:eu-west-1:1:stream/s', State: 'Enabled' },
          ],
          NextMarker: 'page-2',
        });
      }
      return json({
        EventSourceMappings: [{ UUID: 'u-2', EventSourceArn: 'arn:aws:sqs:eu-west-1:1:priority', State: 'Disabled' }],
      });
    }) as typeof fetch;
    const state = await switchSending(
      { kind: 'aws', settings: { region: 'eu-west-1' }, functionName: 'send-fn' },
      false,
    );
    expect(state.paused).toBe(true);
    expect(state.sources.map((s) => [s.id, s.state])).toEqual([
      ['u-1', 'Disabling'],
      ['u-2', 'Disabled'],
    ]);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'GET https://lambda.eu-west-1.amazonaws.com/2015-03-31/event-source-mappings/?FunctionName=send-fn',
      'GET https://lambda.eu-west-1.amazonaws.com/2015-03-31/event-source-mappings/?FunctionName=send-fn&Marker=page-2',
      'PUT https://lambda.eu-west-1.amazonaws.com/2015-03-31/event-source-mappings/u-1',
    ]);
    expect(calls[2]?.body).toBe('{"Enabled":false}');
    expect(calls[2]?.auth).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, /,
    );
  });

  test('an AWS error keeps its name (AccessDeniedException) for the advice', async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' });
    global.fetch = (async () =>
      new Response(JSON.stringify({ Message: 'User is not authorized to perform: lambda:ListEventSourceMappings' }), {
        status: 403,
        headers: { 'x-amzn-errortype': 'AccessDeniedException:http://internal' },
      })) as unknown as typeof fetch;
    await expect(
      readPause({ kind: 'aws', settings: { region: 'eu-west-1' }, functionName: 'f' }),
    ).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('not authorized') });
  });
});

describe('Signature Version 4', () => {
  const bytes = (data: ArrayBuffer | ArrayBufferView | string): Uint8Array | string =>
    typeof data === 'string'
      ? data
      : data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  class Sha256 {
    readonly #hash;
    constructor(secret?: ArrayBuffer | ArrayBufferView | string) {
      this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
    }
    update(data: ArrayBuffer | ArrayBufferView | string): void {
      this.#hash.update(bytes(data));
    }
    digest(): Promise<Uint8Array> {
      return Promise.resolve(new Uint8Array(this.#hash.digest()));
    }
  }

  test.each([
    [
      'a GET with a query (and a session token)',
      'GET',
      '/2015-03-31/event-source-mappings/',
      { FunctionName: 'my-fn', Marker: 'a b/c*' },
      undefined,
      'tok',
    ],
    ['a PUT with a JSON body', 'PUT', '/2015-03-31/event-source-mappings/1b2c-3d', {}, '{"Enabled":true}', undefined],
  ] as const)('signs %s as the SDK does', async (_, method, pathName, query, body, sessionToken) => {
    const credentials = {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken,
    };
    const now = new Date('2026-12-03T08:00:00Z');
    const host = 'lambda.eu-west-1.amazonaws.com';
    const headers = { 'content-type': 'application/json' };
    const ours = sign(
      { method, host, path: pathName, query, headers, ...(body ? { body } : {}) },
      credentials,
      'eu-west-1',
      'lambda',
      now,
    );
    const sdk = new SignatureV4({ credentials, region: 'eu-west-1', service: 'lambda', sha256: Sha256 });
    const signed = await sdk.sign(
      {
        method,
        protocol: 'https:',
        hostname: host,
        path: pathName,
        query: { ...query },
        headers: { ...headers, host },
        ...(body ? { body } : {}),
      },
      { signingDate: now },
    );
    const signature = (h: Record<string, string | undefined>) =>
      /Signature=([0-9a-f]+)/.exec(h.authorization ?? '')?.[1];
    expect(signature(ours)).toBeDefined();
    expect(signature(ours)).toBe(signature(signed.headers as Record<string, string>));
  });
});
