/**
 * `email-pipeline dlq list|redrive|delete|purge|tasks|stop-task`: what is in a DLQ and why; send it
 * back (all of it with the native move task, or selectively by code or key); delete selectively
 * (also to remove a person's data) or all; follow and stop a move task. `--queue` picks the send
 * DLQ (default), the ledger's or the topic subscription's. The operations are operations.ts.
 * `--team NAME` acts on one team's dead letters of the send DLQ: its keys are `<team>#<key>`, so
 * `--key K` selects `<team>#K`, and without --key every key of the team; purge stays whole.
 *
 * Old spellings that still work, with a warning: `dlq cancel --task` (now `stop-task`: `cancel
 * <key>` cancels an email) and `purge --yes-delete-all-messages` (now `--yes`, as every command that
 * deletes or moves messages).
 */
import { deprecated, parseCommand, wholeNumber } from '../cli/args';
import { ERROR_CODE_NAMES, knownCode } from '../cli/codes';
import type { Command, Io } from '../cli/command';
import { consent, CONFIRM_OPTIONS } from '../cli/confirm';
import { DEFAULT_STALL_SECONDS, dlqName, operate, QUEUES, type DlqOptions, type QueueName } from './operations';
import { awsFailure, suggestion, UsageError } from '../cli/errors';
import { keyOfTeam, TEAM_OPTION, teamOption } from '../cli/team-option';
import {
  resolveTarget,
  TARGET_HELP,
  TARGET_OPTIONS,
  TARGET_SYNOPSIS,
  targetOptions,
  type TargetOptions,
} from '../cli/target';

/** The ledger DLQ mapping's maxConcurrency (lib/construct/ledger/functions.ts, deadLetterMaxConcurrency). */
const LEDGER_REDRIVE_CONCURRENCY = 2;

const T = TARGET_SYNOPSIS;

/** Words joined by ", " in lines of at most 100 characters, the first `indent` characters shorter. */
function wrapped(words: readonly string[], indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const next = line ? `${line}, ${word}` : word;
    if (line && next.length + (lines.length === 0 ? indent : 0) > 99) {
      lines.push(`${line},`);
      line = word;
    } else line = next;
  }
  return [...lines, line].join('\n');
}

export const DLQ_USAGE = `Usage: email-pipeline dlq list      [--summary | --code C | --key K...] [--team NAME] [--max N] [--json] [--queue Q] ${T}
       email-pipeline dlq redrive   (--code C | --key K... | --team NAME) [--max N] [--force] [--yes | --dry-run] [--json] [--queue Q] ${T}
       email-pipeline dlq redrive   [--rate N | --copy [--max N]] [--force] [--yes | --dry-run] [--json] [--queue Q] ${T}
       email-pipeline dlq redrive   --queue ledger [--stall SECONDS] [--yes | --dry-run] [--json] ${T}
       email-pipeline dlq redrive   --queue ledger --stop [--json] ${T}
       email-pipeline dlq delete    (--code C | --key K... | --team NAME) [--yes | --dry-run] [--json] [--queue Q] ${T}
       email-pipeline dlq purge     [--yes | --dry-run] [--json] [--queue Q] ${T}
       email-pipeline dlq tasks     [--json] [--queue Q] ${T}
       email-pipeline dlq stop-task --task HANDLE [--json] ${T}

--queue: send (the send function's DLQ, the default), ledger (SES events the ledger could not
record) or subscription (deliveries SNS could not make to the work queue).
--key K selects the dead letters of dedupe key K and may be repeated (any of them); --code C those
with error code C (with --key: both). A command about one key (status, cancel, resend) takes it as
its argument instead. --team NAME selects a team's dead letters (of the send DLQ): each team's keys
are its own (<team>#<key>), so --key K selects <team>#K, and without --key, every key of the team
(with --code: those with the code; list --summary counts them by code). A message moved by the redrive
policy (no error code) carries the key as published, without its team: select it by --key alone.
redrive with --code, --key or --team moves only those messages, one by one (receive, send to the
source queue with the publisher's attributes, delete); --max N stops after N. Without them, every message
goes back with SQS's message move task (--rate caps its messages per second; tasks shows its
progress, stop-task stops it), or, with --copy, one by one as a selective redrive does (--max N:
at most N; the local emulator and the subscription DLQ have no move task and always copy). Codes
that a redrive cannot fix (KeyReusedWithDifferentContent, InvalidMessage, ...) are refused without --force.
redrive --queue ledger never sends to the ledger's buffer (only SES's events rule may): it enables the
ledger function's own mapping of the ledger DLQ until the DLQ is empty, or has not shrunk for --stall
seconds (default ${DEFAULT_STALL_SECONDS}: events the function fails on return to the DLQ), then disables it (also on Ctrl-C).
A redrive killed before it could disable the mapping leaves it on (verify reports it): --stop disables it.
delete removes the selected messages for good (also to remove a person's data); purge removes all
(whatever their team: dlq delete --team NAME removes a team's).
redrive, delete and purge ask before they change anything (y/N); --yes goes ahead without asking
(needed with no terminal to ask on, as in CI); --dry-run says what they would do and changes nothing.
--json prints one JSON object per message listed, per task, or for what was done.
Error codes (--code): ${wrapped(ERROR_CODE_NAMES, 'Error codes (--code): '.length)}.

${TARGET_HELP}`;

const SUBCOMMANDS = ['list', 'redrive', 'delete', 'purge', 'tasks', 'stop-task'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** Old names of subcommands, still accepted with a warning. */
const RENAMED: Readonly<Record<string, Subcommand>> = { cancel: 'stop-task' };

function isSubcommand(word: string): word is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(word);
}

const OPTIONS = {
  max: { type: 'string' },
  rate: { type: 'string' },
  stall: { type: 'string' },
  stop: { type: 'boolean' },
  json: { type: 'boolean' },
  summary: { type: 'boolean' },
  code: { type: 'string' },
  key: { type: 'string', multiple: true },
  ...TEAM_OPTION,
  force: { type: 'boolean' },
  copy: { type: 'boolean' },
  queue: { type: 'string' },
  task: { type: 'string' },
  ...CONFIRM_OPTIONS,
  /** The old spelling of purge --yes (warns). */
  'yes-delete-all-messages': { type: 'boolean' },
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which options each subcommand takes (beyond the target's and --help). */
const ALLOWED: Readonly<Record<Subcommand, readonly string[]>> = {
  list: ['summary', 'code', 'key', 'team', 'max', 'json', 'queue'],
  redrive: ['code', 'key', 'team', 'force', 'max', 'rate', 'copy', 'queue', 'stall', 'stop', 'yes', 'dry-run', 'json'],
  delete: ['code', 'key', 'team', 'queue', 'yes', 'dry-run', 'json'],
  purge: ['queue', 'yes', 'dry-run', 'json', 'yes-delete-all-messages'],
  tasks: ['queue', 'json'],
  'stop-task': ['task', 'json', 'queue'],
};

/** What each subcommand that changes something does, for the confirmation it needs. */
const CHANGES: Partial<Readonly<Record<Subcommand, string>>> = {
  redrive: 'dlq redrive moves messages back to their queue',
  delete: 'dlq delete deletes messages for good',
  purge: 'dlq purge deletes every message in the DLQ for good',
};

function isQueue(word: string): word is QueueName {
  return (QUEUES as readonly string[]).includes(word);
}

/** The options of a dlq command line, checked; throws UsageError naming what is wrong. */
export function dlqOptions(
  argv: readonly string[],
  io: Pick<Io, 'out' | 'err' | 'interactive'>,
): { sub: Subcommand; options: DlqOptions; target: TargetOptions } | undefined {
  const parsed = parseCommand(argv, OPTIONS, DLQ_USAGE, io, ['yes-delete-all-messages']);
  if (!parsed) return undefined;
  const { values: given, positionals } = parsed;
  const [word, ...extra] = positionals;
  if (word === undefined) throw new UsageError(`say what to do: ${SUBCOMMANDS.join(', ')}`, DLQ_USAGE);
  const renamed = RENAMED[word];
  if (renamed !== undefined) deprecated(io, `dlq ${word}`, `dlq ${renamed}`);
  const sub = renamed ?? word;
  if (!isSubcommand(sub)) {
    throw new UsageError(`unknown dlq command "${sub}"${suggestion(sub, SUBCOMMANDS)}`, DLQ_USAGE);
  }
  if (extra.length > 0) {
    const hint = sub === 'delete' || sub === 'redrive' || sub === 'list' ? ' (select keys with --key K)' : '';
    throw new UsageError(`unexpected argument "${extra[0] ?? ''}"${hint}`, DLQ_USAGE);
  }
  if (sub === 'purge' && given.team !== undefined) {
    throw new UsageError(
      '--team does not go with dlq purge: purge deletes every message in the DLQ, whatever its team; use dlq delete --team NAME',
      DLQ_USAGE,
    );
  }
  for (const name of Object.keys(given)) {
    if (['stack', 'pipeline', 'region', 'help'].includes(name) || ALLOWED[sub].includes(name)) continue;
    throw new UsageError(`--${name} does not go with dlq ${sub}`, DLQ_USAGE);
  }
  let values = given;
  if (given['yes-delete-all-messages']) {
    deprecated(io, 'dlq purge --yes-delete-all-messages', 'dlq purge --yes');
    values = { ...given, yes: true };
  }
  const max = wholeNumber('max', values.max, 1, DLQ_USAGE);
  const rate = wholeNumber('rate', values.rate, 1, DLQ_USAGE);
  if (rate !== undefined && rate > 500)
    throw new UsageError('--rate is at most 500 (the SQS move task limit)', DLQ_USAGE);
  const code = values.code === undefined ? undefined : knownCode(values.code, DLQ_USAGE);
  if (values.key?.some((k) => k === '')) throw new UsageError('--key needs a dedupe key', DLQ_USAGE);
  const team = teamOption(values.team, DLQ_USAGE);
  // A team's keys are in its namespace (kernel/teams.ts): --key K of team T is T#K.
  const keys = values.key?.map((k) => keyOfTeam(team, k));
  const selective = code !== undefined || keys !== undefined || team !== undefined;
  if (sub === 'delete' && !selective) {
    throw new UsageError(
      'say which messages: dlq delete --key K (or --code C, or --team NAME); purge deletes all',
      DLQ_USAGE,
    );
  }
  if (sub === 'stop-task' && values.task === undefined) {
    throw new UsageError('say which task: dlq stop-task --task HANDLE (dlq tasks lists them)', DLQ_USAGE);
  }
  // A team's dead letters may be counted by code (list --team NAME --summary).
  if (values.summary && (code !== undefined || keys !== undefined)) {
    throw new UsageError('--summary counts every message by code: leave out --code and --key', DLQ_USAGE);
  }
  const queue = values.queue ?? 'send';
  if (!isQueue(queue)) throw new UsageError(`unknown queue "${queue}"${suggestion(queue, QUEUES)}`, DLQ_USAGE);
  if (team !== undefined && queue !== 'send') {
    throw new UsageError(
      `--team does not go with --queue ${queue}: only the send function makes a team's key (<team>#<key>); ` +
        `the ${queue} DLQ's messages carry ${queue === 'ledger' ? "SES's tag of it" : 'the key as published'}`,
      DLQ_USAGE,
    );
  }
  const stall = wholeNumber('stall', values.stall, 1, DLQ_USAGE);
  if (sub === 'redrive') ledgerRedriveOptions(queue, { ...values, stall });
  if (sub === 'redrive') {
    if (rate !== undefined && (selective || max !== undefined || values.copy)) {
      throw new UsageError(
        '--rate goes with the move task (redrive of every message, without --code, --key, --team, --copy or --max)',
        DLQ_USAGE,
      );
    }
    if (max !== undefined && !selective && !values.copy) {
      throw new UsageError(
        "--max moves at most N messages one by one, which SQS's move task cannot: add --copy to say so " +
          '(without --max and --copy, the move task takes every message)',
        DLQ_USAGE,
      );
    }
  }
  const stop = sub === 'redrive' && values.stop === true;
  if (stop) stopOptions(queue, values);
  // --stop only turns a switch off: nothing to confirm.
  const change = stop ? undefined : CHANGES[sub];
  const mode = change === undefined ? undefined : consent(values, change, DLQ_USAGE, io);
  const target = targetOptions(values, DLQ_USAGE);
  return {
    sub,
    target,
    options: {
      queue,
      json: values.json === true,
      summary: values.summary === true,
      force: values.force === true,
      copy: values.copy === true,
      ...(stop ? { stop } : {}),
      ...(mode !== undefined ? { mode } : {}),
      ...(code !== undefined ? { code } : {}),
      ...(keys !== undefined ? { keys } : {}),
      ...(team !== undefined ? { team } : {}),
      ...(values.task !== undefined ? { task: values.task } : {}),
      ...(max !== undefined ? { max } : {}),
      ...(rate !== undefined ? { rate } : {}),
      ...(stall !== undefined ? { stallSeconds: stall } : {}),
    },
  };
}

/** What --stop needs: the ledger queue, and nothing that would start or shape a redrive. */
function stopOptions(queue: QueueName, values: Readonly<Record<string, unknown>>): void {
  if (queue !== 'ledger') {
    throw new UsageError(
      '--stop goes with dlq redrive --queue ledger (the mapping it disables); a move task stops with dlq stop-task',
      DLQ_USAGE,
    );
  }
  const extra = ['stall', 'yes', 'dry-run'].find((name) => values[name] !== undefined);
  if (extra) throw new UsageError(`--${extra} does not go with --stop: it only disables the mapping`, DLQ_USAGE);
}

/** What a redrive of the ledger DLQ refuses (and --stall, which only it takes). */
function ledgerRedriveOptions(
  queue: QueueName,
  values: {
    code?: string;
    key?: readonly string[];
    max?: string;
    rate?: string;
    copy?: boolean;
    force?: boolean;
    stall?: number;
  },
): void {
  if (queue !== 'ledger') {
    if (values.stall !== undefined) {
      throw new UsageError('--stall goes with dlq redrive --queue ledger (the mapping it enables)', DLQ_USAGE);
    }
    return;
  }
  if (values.code !== undefined || values.key !== undefined) {
    throw new UsageError(
      `--${values.code !== undefined ? 'code' : 'key'} does not go with --queue ledger: the ledger DLQ holds SES events, not sends; its redrive takes them all`,
      DLQ_USAGE,
    );
  }
  if (values.max !== undefined || values.rate !== undefined || values.copy) {
    const flag = values.max !== undefined ? 'max' : values.rate !== undefined ? 'rate' : 'copy';
    throw new UsageError(
      `--${flag} does not go with --queue ledger: the ledger function reads its DLQ (at most ${LEDGER_REDRIVE_CONCURRENCY} invocations at once)`,
      DLQ_USAGE,
    );
  }
}

export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'list, redrive (all or by code or key), delete or purge a dead-letter queue',
  usage: DLQ_USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const checked = dlqOptions(argv, io);
    if (!checked) return;
    const { sub, options } = checked;
    const target = await resolveTarget(checked.target);
    try {
      await operate(sub, target, options, io);
    } catch (error) {
      throw awsFailure(
        `Could not ${sub === 'stop-task' ? 'stop the move task of' : sub} ${dlqName(options.queue)} of ${target.description}`,
        error,
        !target.local,
      );
    }
  },
};
