/**
 * Pausing the local pipeline (npm start), and knowing it has stopped. The switch is a flag file in
 * the state folder; each send consumer (tools/dev/local/consumer-main.ts, one per lane's container)
 * reads it before each receive, between batches. A consumer that finds it writes an
 * acknowledgement: the flag's contents (a fresh token for each pause) into its own file in the
 * folder `<flag file>.consumers/`. The acknowledgement is written only between batches, so it
 * means "my batch in hand is settled, and I receive nothing until the flag is gone": `pause`
 * returns once every running consumer has acknowledged this pause's token, and nothing published
 * after that is sent before `resume`.
 *
 * A consumer registers (its file, with its pid) before its first receive and removes the file when
 * it stops; one killed without cleaning up is recognised by its pid and no longer waited for.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/** What a consumer says of itself. */
export interface LocalConsumer {
  readonly name: string;
  readonly pid: number;
  /** The queue it polls. */
  readonly queue: string;
  /** The pause token it has stopped for, or null while it receives. */
  readonly paused: string | null;
  /** When it last wrote (ISO 8601). */
  readonly at: string;
}

/** The folder of the consumers' files. */
export function consumersDir(flagFile: string): string {
  return `${flagFile}.consumers`;
}

/** Writes `text` so that a reader never sees half of it (a temporary file, then a rename). */
function writeWhole(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** The token of the pause in force, or undefined when sending is on. */
export function pauseToken(flagFile: string): string | undefined {
  try {
    return readFileSync(flagFile, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Pauses: writes the flag with a fresh token (a pause in force gets a new one, to be acknowledged again). */
export function writePause(flagFile: string, now: Date = new Date()): string {
  const token = `paused at ${now.toISOString()} (${randomUUID()})`;
  writeWhole(flagFile, `${token}\n`);
  return token;
}

/** Resumes: the flag removed (the consumers receive again at their next look). */
export function removePause(flagFile: string): void {
  rmSync(flagFile, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The consumers running now, by name; the files of those gone are removed. */
export function runningConsumers(flagFile: string): LocalConsumer[] {
  const dir = consumersDir(flagFile);
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const running: LocalConsumer[] = [];
  for (const file of files) {
    let consumer: LocalConsumer;
    try {
      consumer = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as LocalConsumer;
    } catch {
      continue; // removed meanwhile
    }
    if (alive(consumer.pid)) running.push(consumer);
    else rmSync(path.join(dir, file), { force: true });
  }
  return running.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.pid - b.pid));
}

/**
 * A consumer's state as Lambda would name a mapping's: Disabled once it has acknowledged the pause
 * in force, Disabling before; Enabled while it receives, Enabling until it has seen a resume.
 */
export function consumerState(consumer: LocalConsumer, token: string | undefined): string {
  if (token !== undefined) return consumer.paused === token ? 'Disabled' : 'Disabling';
  return consumer.paused === null ? 'Enabled' : 'Enabling';
}

/**
 * The consumer's side: registers, answers "paused?" before each receive (acknowledging a pause the
 * first time it sees it), and unregisters.
 */
export class PauseWatch {
  private readonly file: string;
  private acknowledged: string | null = null;

  constructor(
    private readonly flagFile: string,
    private readonly name: string,
    private readonly queue: string,
  ) {
    this.file = path.join(consumersDir(flagFile), `${name}-${process.pid}.json`);
  }

  private write(): void {
    const consumer: LocalConsumer = {
      name: this.name,
      pid: process.pid,
      queue: this.queue,
      paused: this.acknowledged,
      at: new Date().toISOString(),
    };
    mkdirSync(path.dirname(this.file), { recursive: true });
    writeWhole(this.file, `${JSON.stringify(consumer)}\n`);
  }

  /** Says this consumer runs (before its first receive). */
  register(): void {
    this.acknowledged = pauseToken(this.flagFile) ?? null;
    this.write();
  }

  /**
   * Whether sending is paused. Called only between batches (nothing in hand): a pause seen here
   * is acknowledged at once, since this consumer will not receive until the flag is gone.
   */
  isPaused(): boolean {
    const token = pauseToken(this.flagFile) ?? null;
    if (token !== this.acknowledged) {
      this.acknowledged = token;
      this.write();
    }
    return token !== null;
  }

  /** Says this consumer has stopped. */
  unregister(): void {
    if (existsSync(this.file)) rmSync(this.file, { force: true });
  }
}
