/**
 * The operator CLI, `email-pipeline <command>`: shipped in the package's `bin`, and what
 * `npm run dlq` / `npm run publish-email` / `npm run status` run in this repository.
 *
 * Exit codes: 0 success, 1 the operation failed (the message says what to do next), 2 a usage
 * error (with the command's usage). Results go to stdout, one per line, safe to pipe (a closed
 * pipe ends the command quietly); notes and errors go to stderr. Every line goes through
 * printable.ts: no control or text-direction character from a key, a body or an argument reaches
 * the terminal raw.
 */
import { createInterface } from 'node:readline/promises';
import { callbacksCommand } from './callbacks-command';
import { cancelCommand } from './cancel-command';
import type { Command, Io } from './command';
import { deliveriesCommand } from './deliveries-command';
import { dlqCommand } from '../dlq/command';
import { pauseCommand, resumeCommand } from './pause-command';
import { OperationError, suggestion, UsageError } from './errors';
import { printable, printableIo, printableLines } from './printable';
import { publishCommand } from './publish-command';
import { resendCommand } from './resend-command';
import { statusCommand } from './status-command';
import { TARGET_HELP } from './target';
import { verifyCommand } from './verify-command';
import { packageVersion } from './version';

/** Every command of `email-pipeline`, by name. */
export const COMMANDS: readonly Command[] = [
  callbacksCommand,
  cancelCommand,
  deliveriesCommand,
  dlqCommand,
  pauseCommand,
  publishCommand,
  resendCommand,
  resumeCommand,
  statusCommand,
  verifyCommand,
];

function topUsage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: email-pipeline <command> [options]    (email-pipeline <command> --help for its options)',
    '       email-pipeline --version',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Every command takes --json (one JSON object per result on stdout). A command about one dedupe key',
    'takes it as its argument (status <key>); --key K selects dead letters in dlq and may be repeated.',
    'Commands that delete or move messages or records ask first, or take --yes; --dry-run changes nothing.',
    '',
    TARGET_HELP,
  ].join('\n');
}

/** The first line of a usage text (the short form printed with a usage error). */
function shortUsage(usage: string): string {
  return usage.split('\n\n')[0] ?? usage;
}

/** One line from the terminal, the question on stderr (stdout stays the command's result). */
async function askTerminal(question: string): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return await terminal.question(question);
  } finally {
    terminal.close();
  }
}

const io: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  interactive: process.stdin.isTTY === true,
  ask: askTerminal,
};

/** The exit code of a failure, after saying what went wrong (and, for a usage error only, how to call). */
function failed(error: unknown, program: string, usage: string, out: Io): number {
  // The message is one line, whatever it echoes (an argument, AWS's message): its line breaks are escaped too.
  if (error instanceof UsageError) {
    out.err(`${program}: ${printable(error.message)}`);
    out.err(shortUsage(error.usage ?? usage));
    return 2;
  }
  const text =
    error instanceof OperationError
      ? error.message
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
  out.err(`${program}: ${printable(text)}`);
  return 1;
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: readonly string[], given: Io = io): Promise<number> {
  const out = printableIo(given);
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      (name === undefined ? out.err : out.out)(topUsage());
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-V') {
      const version = packageVersion();
      if (version === undefined) throw new OperationError('Could not find the package.json of exactly-once-email.');
      out.out(version);
      return 0;
    }
    const command = COMMANDS.find((c) => c.name === name);
    if (!command) {
      throw new UsageError(
        `unknown command "${name}"${suggestion(
          name,
          COMMANDS.map((c) => c.name),
        )}`,
      );
    }
    await command.run(rest, out);
    return 0;
  } catch (error) {
    return failed(error, 'email-pipeline', topUsage(), out);
  }
}

/**
 * Runs a command of its own (a script with one command, such as `npm run status`) with the
 * same convention; resolves to the exit code.
 */
export async function runCommand(command: Command, argv: readonly string[], given: Io = io): Promise<number> {
  const out = printableIo(given);
  try {
    await command.run(argv, out);
    return 0;
  } catch (error) {
    return failed(error, command.name, command.usage, out);
  }
}

/** The process entry: exit code from `runner` ({@link run}); a closed stdout (`| head`) ends quietly. */
export function main(
  argv: readonly string[] = process.argv.slice(2),
  runner: (argv: readonly string[]) => Promise<number> = run,
): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  runner(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`email-pipeline: ${printableLines(String(error))}\n`);
      process.exitCode = 1;
    },
  );
}
