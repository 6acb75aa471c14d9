/**
 * pause / resume: arguments, what "paused" and "stopped" mean over several event sources, the
 * calls to Lambda (every SQS mapping of the send function, only those not already as asked, then
 * followed until every one is Disabled), the local consumers' acknowledgements, and the Signature
 * Version 4 the CLI signs them with (checked against the SDK's own signer).
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import { sign } from '../../../../lib/cli/aws-rest';
import { consumersDir, PauseWatch, runningConsumers } from '../../../../lib/cli/local-pause';
import { run } from '../../../../lib/cli/main';
import { NotStopped, pauseState, readPause, switchSending, waitUntilStopped } from '../../../../lib/cli/pause';
import { formatPauseState } from '../../../../lib/cli/pause-command';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('arguments', () => {
  test('--help prints the usage and exits 0; stray arguments and resume --show are usage errors', async () => {
    const help = capture();
    expect(await run(['pause', '--help'], help.io)).toBe(0);
    expect(help.out.join('\n')).toContain('email-pipeline pause --show');
    expect(help.out.join('\n')).toContain('the high-priority queue');
    const stray = capture();
    expect(await run(['pause', 'now'], stray.io)).toBe(2);
    expect(stray.err.join('\n')).toContain('unexpected argument "now"');
    const show = capture();
    expect(await run(['resume', '--show'], show.io)).toBe(2);
    expect(show.err.join('\n')).toContain('--show goes with pause');
    const status = capture();
    expect(await run(['resume', '--status'], status.io)).toBe(2);
    expect(status.err.join('\n')).toContain('--status goes with pause');
    const typo = capture();
    expect(await run(['pause', '--shwo'], typo.io)).toBe(2);
    expect(typo.err.join('\n')).toContain('did you mean --show?');
    const timeout = capture();
    expect(await run(['pause', '--show', '--timeout', '5'], timeout.io)).toBe(2);
    expect(timeout.err.join('\n')).toContain('--timeout goes with pause, not --show');
    const zero = capture();
    expect(await run(['pause', '--timeout', '0'], zero.io)).toBe(2);
    expect(zero.err.join('\n')).toContain('--timeout must be a whole number of at least 1');
  });

  test('pause --status is the old spelling of --show: it still reads, with a warning', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pause-status-'));
    const saved = process.env.LOCAL_STATE_DIR;
    process.env.LOCAL_STATE_DIR = dir;
    try {
      // No local pipeline: the command gets as far as looking for it, after the warning.
      const old = capture();
      expect(await run(['pause', '--status'], old.io)).toBe(1);
      expect(old.err[0]).toBe(
        'email-pipeline: pause --status is deprecated: use pause --show (the old spelling goes in a future major version)',
      );
      expect(old.err.join('\n')).toContain('No local pipeline found');
    } finally {
      if (saved === undefined) delete process.env.LOCAL_STATE_DIR;
      else process.env.LOCAL_STATE_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('paused means no source receives; stopped, that every one is Disabled', () => {
  const src = (state: string) => ({ id: state, queue: 'arn:aws:sqs:eu-west-1:1:q', state });
  test('every source off or going off', () => {
    expect(pauseState([src('Disabled'), src('Disabling')])).toMatchObject({ paused: true, stopped: false });
    expect(pauseState([src('Disabled'), src('Disabled')])).toMatchObject({ paused: true, stopped: true });
    expect(pauseState([src('Disabled'), src('Updating')])).toMatchObject({ paused: true, stopped: false });
    expect(pauseState([src('Disabled'), src('Enabled')])).toMatchObject({ paused: false, stopped: false });
    expect(pauseState([src('Enabling')]).paused).toBe(false);
  });
  test('printed with one line per source', () => {
    const lines = formatPauseState(pauseState([src('Disabled')]), 'stack S');
    expect(lines[0]).toBe(
      'Sending is paused on stack S: messages wait in the queue (email-pipeline resume starts again).',
    );
    expect(lines[1]).toMatch(/^ {2}Disabled\s+arn:aws:sqs:eu-west-1:1:q {2}Disabled$/);
    expect(formatPauseState(pauseState([src('Disabling')]), 'stack S')[0]).toContain('Sending is pausing on stack S');
  });
});

describe('locally a flag file, acknowledged by every send consumer', () => {
  let dir: string;
  let flagFile: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pause-'));
    flagFile = path.join(dir, 'send-paused');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('pause writes it, --show reads it, resume removes it', async () => {
    const at = { kind: 'local' as const, flagFile };
    expect((await readPause(at)).paused).toBe(false);
    expect((await switchSending(at, false)).paused).toBe(true);
    expect((await readPause(at)).paused).toBe(true);
    expect((await switchSending(at, true)).paused).toBe(false);
  });

  test('stopped only once every running consumer, of every lane, has acknowledged this pause', async () => {
    const at = { kind: 'local' as const, flagFile };
    const normal = new PauseWatch(flagFile, 'pod-1', 'http://queue');
    const high = new PauseWatch(flagFile, 'high-1', 'http://high');
    normal.register();
    high.register();
    expect(normal.isPaused()).toBe(false);
    expect((await readPause(at)).sources.map((s) => [s.id, s.queue, s.state])).toEqual([
      ['high-1', 'http://high', 'Enabled'],
      ['pod-1', 'http://queue', 'Enabled'],
    ]);

    await switchSending(at, false);
    // Neither has looked between two batches yet: each may still be receiving.
    expect(await readPause(at)).toMatchObject({ paused: true, stopped: false });
    expect(normal.isPaused()).toBe(true);
    expect((await readPause(at)).sources.map((s) => s.state)).toEqual(['Disabling', 'Disabled']);
    const waited = waitUntilStopped(at, { timeoutMs: 5_000, pollMs: 5 });
    expect(high.isPaused()).toBe(true);
    expect(await waited).toMatchObject({ paused: true, stopped: true });

    // A second pause is a new token: acknowledged again before it counts.
    await switchSending(at, false);
    expect((await readPause(at)).stopped).toBe(false);
    normal.isPaused();
    high.isPaused();
    expect((await readPause(at)).stopped).toBe(true);

    await switchSending(at, true);
    expect((await readPause(at)).sources.map((s) => s.state)).toEqual(['Enabling', 'Enabling']);
    expect(normal.isPaused()).toBe(false);
    high.unregister();
    expect((await readPause(at)).sources.map((s) => [s.id, s.state])).toEqual([['pod-1', 'Enabled']]);
  });

  test('a consumer that never acknowledges: NotStopped after the timeout; a resume meanwhile ends the wait at once', async () => {
    const at = { kind: 'local' as const, flagFile };
    new PauseWatch(flagFile, 'pod-1', 'http://queue').register();
    await switchSending(at, false);
    let clock = 0;
    const wait = { timeoutMs: 1_000, pollMs: 100, now: () => clock, sleep: async (ms: number) => void (clock += ms) };
    const late = await waitUntilStopped(at, wait).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(NotStopped);
    expect((late as NotStopped).state.sources).toMatchObject([{ id: 'pod-1', state: 'Disabling' }]);
    expect(clock).toBe(1_000);

    await switchSending(at, true);
    clock = 0;
    const resumed = await waitUntilStopped(at, wait).catch((error: unknown) => error);
    expect((resumed as NotStopped).state.paused).toBe(false);
    expect(clock).toBe(0);
  });

  test('a consumer killed without cleaning up is not waited for, and its file goes', async () => {
    const at = { kind: 'local' as const, flagFile };
    mkdirSync(consumersDir(flagFile), { recursive: true });
    // A pid no process has: above the kernel's pid_max.
    const gone = { name: 'pod-9', pid: 2 ** 22 + 1, queue: 'http://queue', paused: null, at: '' };
    writeFileSync(path.join(consumersDir(flagFile), 'pod-9-1.json'), JSON.stringify(gone));
    await switchSending(at, false);
    expect(await waitUntilStopped(at, { timeoutMs: 1_000, pollMs: 5 })).toMatchObject({ stopped: true, sources: [] });
    expect(runningConsumers(flagFile)).toEqual([]);
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

  test('the wait follows every mapping until each is Disabled (Disabling and Updating still receive)', async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_PROFILE: '' });
    delete process.env.AWS_SESSION_TOKEN;
    const answers = [
      ['Disabling', 'Disabled'],
      ['Disabled', 'Updating'],
      ['Disabled', 'Disabled'],
    ];
    let lists = 0;
    global.fetch = (async () => {
      const states = answers[Math.min(lists++, answers.length - 1)] ?? [];
      return new Response(
        JSON.stringify({
          EventSourceMappings: states.map((State, i) => ({
            UUID: `u-${i + 1}`,
            EventSourceArn: `arn:aws:sqs:eu-west-1:1:${i === 0 ? 'work' : 'high'}`,
            State,
          })),
        }),
        { status: 200 },
      );
    }) as typeof fetch;
    const at = { kind: 'aws' as const, settings: { region: 'eu-west-1' }, functionName: 'send-fn' };
    const seen: string[][] = [];
    const state = await waitUntilStopped(at, {
      timeoutMs: 60_000,
      sleep: async () => undefined,
      progress: (s) => seen.push(s.sources.map((x) => x.state)),
    });
    expect(state).toMatchObject({ paused: true, stopped: true });
    expect(seen).toEqual([
      ['Disabling', 'Disabled'],
      ['Disabled', 'Updating'],
    ]);

    // Never Disabled within the timeout: NotStopped with the last state seen.
    lists = 0;
    answers.splice(0, answers.length, ['Disabling', 'Disabled']);
    let clock = 0;
    const late = await waitUntilStopped(at, {
      timeoutMs: 10_000,
      pollMs: 2_000,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
    }).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(NotStopped);
    expect((late as NotStopped).state.sources.map((x) => x.state)).toEqual(['Disabling', 'Disabled']);
    expect(lists).toBe(6);
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
