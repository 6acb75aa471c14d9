/**
 * dlq redrive --queue ledger: the drain (enable the ledger DLQ's mapping, follow the DLQ until it
 * is empty or stops shrinking, disable it whatever happened), the lines it prints, and the Lambda calls of the AWS switch (over a
 * stubbed fetch: the request shapes Lambda's REST API takes). Its arguments: ledger-redrive-command.test.ts.
 */
import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  awsRedriveSwitch,
  drainLedgerDeadLetters,
  isOn,
  localRedriveSwitch,
  type Depth,
  type DrainOptions,
  type RedriveSwitch,
} from '../../../../lib/dlq/ledger-redrive';
import { describeDrain } from '../../../../lib/dlq/ledger-redrive-command';

/** A switch that records its calls; `enable` or `disable` may be made to fail. */
function recordingSwitch(fail: { enable?: boolean; disable?: boolean } = {}) {
  const calls: string[] = [];
  const source: RedriveSwitch = {
    name: 'the mapping m-1',
    enable: () => {
      calls.push('enable');
      return fail.enable ? Promise.reject(new Error('AccessDeniedException: not allowed')) : Promise.resolve();
    },
    disable: () => {
      calls.push('disable');
      return fail.disable ? Promise.reject(new Error('ThrottlingException: slow down')) : Promise.resolve();
    },
    state: () => Promise.resolve(calls.at(-1) === 'enable' ? 'Enabled' : 'Disabled'),
  };
  return { source, calls };
}

/**
 * A drain against a scripted DLQ: each read returns the next depth (the last one repeats), on a
 * virtual clock that each poll advances by `pollMs`.
 */
function scripted(depths: Depth[], overrides: Partial<DrainOptions> = {}) {
  let clock = 0;
  let reads = 0;
  const progress: string[] = [];
  const { source, calls } = recordingSwitch();
  const options: DrainOptions = {
    depth: () => Promise.resolve(depths[Math.min(reads++, depths.length - 1)]!),
    source,
    stallMs: 10_000,
    pollMs: 1_000,
    progress: (line) => progress.push(line),
    now: () => clock,
    sleep: (ms) => {
      clock += ms;
      return Promise.resolve();
    },
    ...overrides,
  };
  return { options, progress, calls, reads: () => reads };
}

const d = (visible: number, inFlight = 0): Depth => ({ visible, inFlight });

describe('the drain', () => {
  test('an empty DLQ: nothing is enabled', async () => {
    const s = scripted([d(0)]);
    expect(await drainLedgerDeadLetters(s.options)).toEqual({
      before: 0,
      after: 0,
      ended: 'nothing-to-do',
      disabled: true,
    });
    expect(s.calls).toEqual([]);
  });

  test('enables, follows the DLQ until nothing is visible or in flight (twice), then disables', async () => {
    const s = scripted([d(3), d(1, 2), d(0, 1), d(0), d(0)]);
    const result = await drainLedgerDeadLetters(s.options);
    expect(result).toEqual({ before: 3, after: 0, ended: 'empty', disabled: true });
    expect(s.calls).toEqual(['enable', 'disable']);
    expect(s.progress).toContain('  3 left (1 visible, 2 in flight)');
    expect(s.progress).toContain('  1 left (0 visible, 1 in flight)');
    expect(s.progress).toContain('  0 left (0 visible, 0 in flight)');
  });

  test('one read of zero is not enough: the counts are approximate', async () => {
    const s = scripted([d(2), d(0), d(1), d(0), d(0)]);
    const result = await drainLedgerDeadLetters(s.options);
    expect(result.ended).toBe('empty');
    expect(s.reads()).toBe(5);
  });

  test('stops when the DLQ has not shrunk for the stall time (poison events return to it), and disables', async () => {
    // Two of five are never recorded: they alternate between visible and in flight.
    const s = scripted([d(5), d(3, 2), d(2), d(0, 2), d(2), d(0, 2)], { stallMs: 5_000 });
    const result = await drainLedgerDeadLetters(s.options);
    expect(result).toEqual({ before: 5, after: 2, ended: 'stalled', disabled: true });
    expect(s.calls).toEqual(['enable', 'disable']);
  });

  test('progress resets the stall clock: a slow drain is not cut short', async () => {
    const depths = [d(10), ...[9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0].map((n) => d(n))];
    // Each poll is 4 s and the stall 5 s: every poll shrinks the DLQ, so it runs to the end.
    const s = scripted(depths, { pollMs: 4_000, stallMs: 5_000 });
    expect((await drainLedgerDeadLetters(s.options)).ended).toBe('empty');
  });

  test('Ctrl-C (the signal) stops it and disables the mapping', async () => {
    const controller = new AbortController();
    let reads = 0;
    const s = scripted([], {
      depth: () => {
        reads += 1;
        if (reads === 3) controller.abort();
        return Promise.resolve(d(4));
      },
      signal: controller.signal,
    });
    const result = await drainLedgerDeadLetters(s.options);
    expect(result).toEqual({ before: 4, after: 4, ended: 'interrupted', disabled: true });
    expect(s.calls).toEqual(['enable', 'disable']);
  });

  test('an error while draining still disables, and says so', async () => {
    let reads = 0;
    const s = scripted([], {
      depth: () => (++reads < 3 ? Promise.resolve(d(4)) : Promise.reject(new Error('QueueDoesNotExist'))),
    });
    await expect(drainLedgerDeadLetters(s.options)).rejects.toThrow(
      'QueueDoesNotExist (the mapping m-1 was disabled again)',
    );
    expect(s.calls).toEqual(['enable', 'disable']);
  });

  test('a failed enable is reported, and the disable is still tried', async () => {
    const { source, calls } = recordingSwitch({ enable: true });
    const s = scripted([d(1)], { source });
    await expect(drainLedgerDeadLetters(s.options)).rejects.toThrow('AccessDeniedException: not allowed');
    expect(calls).toEqual(['enable', 'disable']);
  });

  test('a failed disable is not hidden: the result says why', async () => {
    const { source } = recordingSwitch({ disable: true });
    const s = scripted([d(1), d(0), d(0)], { source });
    const result = await drainLedgerDeadLetters(s.options);
    expect(result).toMatchObject({
      ended: 'empty',
      disabled: false,
      disableError: 'Error: ThrottlingException: slow down',
    });
    expect(describeDrain(result, 'the ledger DLQ of stack S', source)).toBe(
      'Redrove the ledger DLQ of stack S through the ledger function: 1 message(s) before, 0 after.',
    );
  });

  test('what it did, in one line', () => {
    const { source } = recordingSwitch();
    expect(
      describeDrain({ before: 3, after: 0, ended: 'empty', disabled: true }, 'the ledger DLQ of stack S', source),
    ).toBe(
      'Redrove the ledger DLQ of stack S through the ledger function: 3 message(s) before, 0 after. The mapping m-1 is disabled again.',
    );
    expect(
      describeDrain(
        { before: 0, after: 0, ended: 'nothing-to-do', disabled: true },
        'the ledger DLQ of stack S',
        source,
      ),
    ).toBe('The ledger DLQ of stack S is empty: nothing to redrive.');
  });
});

describe('the switches', () => {
  test('on means the ledger function reads its DLQ, or is about to', () => {
    expect(['Enabled', 'Enabling'].map(isOn)).toEqual([true, true]);
    expect(['Disabled', 'Disabling', 'Creating', 'Updating', 'Deleting', 'Unknown'].map(isOn)).toEqual(
      Array(6).fill(false),
    );
  });

  test('locally a flag file: enable writes it, disable removes it; its state is whether it is there', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ledger-redrive-'));
    try {
      const flag = path.join(dir, 'ledger-dlq-redrive');
      const local = localRedriveSwitch(flag);
      expect(await local.state()).toBe('Disabled');
      await local.enable();
      expect(existsSync(flag)).toBe(true);
      expect(await local.state()).toBe('Enabled');
      expect(isOn(await local.state())).toBe(true);
      await local.disable();
      expect(existsSync(flag)).toBe(false);
      expect(isOn(await local.state())).toBe(false);
      await local.disable();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('on AWS: UpdateEventSourceMapping Enabled=true, GetEventSourceMapping until Enabled, then Enabled=false; state by GetEventSourceMapping', async () => {
    const requests: { method: string; url: string; body?: string; auth: string }[] = [];
    const states = ['Enabling', 'Enabling', 'Enabled', 'Disabling'];
    const original = globalThis.fetch;
    globalThis.fetch = ((url: string, init: RequestInit) => {
      const headers = init.headers as Record<string, string>;
      requests.push({
        method: init.method ?? 'GET',
        url,
        ...(init.body !== undefined ? { body: String(init.body) } : {}),
        auth: headers.authorization ?? '',
      });
      const state =
        init.method === 'GET' ? states.shift() : JSON.parse(String(init.body)).Enabled ? 'Enabling' : 'Disabling';
      return Promise.resolve(new Response(JSON.stringify({ UUID: 'u-1', State: state }), { status: 200 }));
    }) as typeof fetch;
    const env = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-1',
    });
    try {
      const aws = awsRedriveSwitch({ region: 'eu-west-1' }, 'u-1', { pollMs: 1 });
      await aws.enable();
      await aws.disable();
      expect(await aws.state()).toBe('Disabling');
    } finally {
      globalThis.fetch = original;
      process.env = env;
    }
    const base = 'https://lambda.eu-west-1.amazonaws.com/2015-03-31/event-source-mappings/u-1';
    expect(requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PUT', base, '{"Enabled":true}'],
      ['GET', base, undefined],
      ['GET', base, undefined],
      ['GET', base, undefined],
      ['PUT', base, '{"Enabled":false}'],
      ['GET', base, undefined],
    ]);
    for (const r of requests)
      expect(r.auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request/);
  });
});
