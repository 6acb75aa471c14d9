/**
 * Child processes that cannot be orphaned, and waiting on conditions.
 *
 * Every child is started with a pipe on its stdin that only this process holds.
 * Guarded children run through `guard.cjs`, which kills the real command when the
 * pipe closes; Node services (`node-service.mjs`) watch the pipe themselves. So
 * when this process dies in any way, SIGKILL included, the children go too.
 * Each child leads its own process group, so `stop()` reaches the whole tree.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** `node guard.cjs <command> [args...]`: runs a command that dies with its parent. */
export const GUARD_SCRIPT = join(__dirname, 'guard.cjs');

export type OutputStream = 'stdout' | 'stderr';
/** Receives each line a child prints, for callers that want to show the logs. */
export type OutputListener = (line: string, stream: OutputStream) => void;

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface LaunchOptions {
  /** Short name used in errors, e.g. "DynamoDB Local". */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /**
   * Start the command through `guard.cjs`. Needed for anything that does not
   * watch its own stdin (java). @default true
   */
  readonly guarded?: boolean;
  /** Environment of the child. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Called for every output line. @default none (lines are only kept for errors) */
  readonly onOutput?: OutputListener;
}

export interface StopOptions {
  /** How long to wait after SIGTERM before SIGKILL. @default 5000 */
  readonly graceMs?: number;
}

/** A running child. Its output is kept (last lines only) for error messages. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves once the child has exited (never rejects). */
  readonly exited: Promise<ExitInfo>;
  /** Exit status, or undefined while running. */
  exitInfo(): ExitInfo | undefined;
  /** The last lines of stderr (or of stdout when stderr is empty), for error messages. */
  tail(): string;
  /** Registers a listener for future output lines; returns a function that removes it. */
  onLine(listener: OutputListener): () => void;
  /** SIGTERM to the child's process group, wait for exit, then SIGKILL. Idempotent. */
  stop(options?: StopOptions): Promise<void>;
}

const TAIL_LINES = 30;

class LineTail {
  private readonly lines: string[] = [];
  private partial = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
  }

  flush(): void {
    if (this.partial) this.add(this.partial);
    this.partial = '';
  }

  text(): string {
    return this.lines.join('\n');
  }

  private add(line: string): void {
    this.lines.push(line);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
    this.emit(line);
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Group already gone; fall back to the direct child in case it was not a group leader.
    try {
      child.kill(signal);
    } catch {
      /* already exited */
    }
  }
}

/** Resolves once every stream has ended (or closed), or after `limitMs`. */
async function drained(streams: ReadonlyArray<Readable | null>, limitMs: number): Promise<void> {
  const open = streams.filter((s): s is Readable => s !== null && !s.readableEnded && !s.closed);
  if (open.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(
      open.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.once('end', resolve);
            s.once('close', resolve);
          }),
      ),
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    }),
  ]);
  clearTimeout(timer);
}

/** Starts a child that cannot outlive this process. Throws if it cannot be spawned at all. */
export async function launch(options: LaunchOptions): Promise<ManagedProcess> {
  const guarded = options.guarded ?? true;
  const command = guarded ? process.execPath : options.command;
  const args = guarded ? [GUARD_SCRIPT, options.command, ...options.args] : [...options.args];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    // Own process group: stop() signals the guard and the real process together, and a
    // Ctrl-C in the terminal reaches only the parent, which then stops us in order.
    detached: true,
  });

  const listeners = new Set<OutputListener>();
  if (options.onOutput) listeners.add(options.onOutput);
  const emit = (stream: OutputStream) => (line: string) => {
    for (const listener of listeners) listener(line, stream);
  };
  const stdout = new LineTail(emit('stdout'));
  const stderr = new LineTail(emit('stderr'));
  // Always drain both pipes: a full pipe would block the child.
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  // Writing to a child that already exited raises EPIPE; nothing is ever written anyway.
  child.stdin?.on('error', () => undefined);

  let exit: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      stdout.flush();
      stderr.flush();
      exit = { code, signal };
      resolve(exit);
    });
  });

  try {
    await once(child, 'spawn');
  } catch (error) {
    throw new Error(`${options.name}: cannot start ${command}: ${(error as Error).message}`);
  }
  // Later errors (a failed kill of a process that just exited) are not fatal.
  child.on('error', () => undefined);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: ${command} has no pid`);

  let stopping: Promise<void> | undefined;
  const stop = (stopOptions: StopOptions = {}): Promise<void> => {
    stopping ??= (async () => {
      if (exit === undefined) {
        killGroup(child, 'SIGTERM');
        const graceMs = stopOptions.graceMs ?? 5000;
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), graceMs);
        });
        const outcome = await Promise.race([exited, timedOut]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          killGroup(child, 'SIGKILL');
          await exited;
        }
      }
      // The guard is gone; make sure nothing else of its group is left either.
      killGroup(child, 'SIGKILL');
      // 'exit' can come before the last lines the child wrote have been read: take them first
      // (bounded, for a grandchild that still holds the pipe open).
      await drained([child.stdout, child.stderr], 2000);
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
    })();
    return stopping;
  };

  return {
    name: options.name,
    pid,
    exited,
    exitInfo: () => exit,
    tail: () => stderr.text() || stdout.text(),
    onLine: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop,
  };
}

export interface WaitOptions {
  /** What is awaited, for the timeout error, e.g. "DynamoDB Local to answer ListTables". */
  readonly what: string;
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Pause between attempts. @default 100 */
  readonly intervalMs?: number;
  /** Fail at once if this process exits, and quote its last output in errors. */
  readonly process?: ManagedProcess;
  /**
   * Settles with a reason to give up at once, for a child that reports a fatal error
   * but does not exit. @default never
   */
  readonly failOn?: Promise<string>;
}

/** Thrown when a child exits or a condition is not met in time. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

function describeFailure(message: string, proc: ManagedProcess | undefined, lastError: unknown): string {
  const parts = [message];
  if (lastError !== undefined) {
    parts.push(`last attempt: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
  }
  const tail = proc?.tail();
  if (tail) parts.push(`last output of ${proc?.name}:\n${tail}`);
  return parts.join('\n');
}

/**
 * Polls `condition` until it returns true. An attempt that throws counts as "not yet".
 * Fails with a {@link StartupError} on timeout, or at once when `process` exits.
 */
export async function waitFor(condition: () => Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 100;
  const proc = options.process;
  let lastError: unknown;
  let fatal: string | undefined;
  const failed = options.failOn?.then((reason) => {
    fatal = reason;
    return 'fatal' as const;
  });
  for (;;) {
    const exit = proc?.exitInfo();
    if (proc && exit) {
      const status = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
      throw new StartupError(
        describeFailure(`${proc.name} exited (${status}) while waiting for ${options.what}`, proc, lastError),
      );
    }
    if (fatal !== undefined) {
      throw new StartupError(describeFailure(`${fatal} while waiting for ${options.what}`, proc, lastError));
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new StartupError(
        describeFailure(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`, proc, lastError),
      );
    }
    // One attempt, cut short by the deadline or by the process exiting (a hung attempt
    // must not hold us past either).
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      condition().then(
        (ok) => (ok ? ('ok' as const) : ('not yet' as const)),
        (error: unknown) => {
          lastError = error;
          return 'failed' as const;
        },
      ),
      new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), remaining);
      }),
      ...(proc ? [proc.exited.then(() => 'exited' as const)] : []),
      ...(failed ? [failed] : []),
    ]);
    clearTimeout(timer);
    if (outcome === 'ok') return;
    if (outcome === 'not yet') lastError = undefined;
    if (outcome !== 'not yet' && outcome !== 'failed') continue;
    const pause = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, Math.min(intervalMs, deadline - Date.now())));
    });
    await Promise.race([pause, ...(proc ? [proc.exited] : []), ...(failed ? [failed] : [])]);
    clearTimeout(timer);
  }
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1 (bind port 0, read it, release it).
 * For programs that cannot report the port they bound (java); another process may
 * still take it in between, so callers retry on "address in use".
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}
