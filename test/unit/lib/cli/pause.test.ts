/**
 * pause / resume: what "paused" and "stopped" mean over several event sources, and the calls to
 * Lambda (every SQS mapping of the send function, only those not already as asked, then followed
 * until every one is Disabled). The arguments are in pause-command.test.ts, the local consumers'
 * acknowledgements in local-pause.test.ts, the Signature Version 4 in aws-rest.test.ts.
 */
import { NotStopped, pauseState, readPause, switchSending, waitUntilStopped } from '../../../../lib/cli/pause';
import { formatPauseState } from '../../../../lib/cli/pause-command';

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
