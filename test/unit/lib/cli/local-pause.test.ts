/** pause / resume locally: a flag file, acknowledged by every running send consumer. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { consumersDir, PauseWatch, runningConsumers } from '../../../../lib/cli/local-pause';
import { NotStopped, readPause, switchSending, waitUntilStopped } from '../../../../lib/cli/pause';

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
