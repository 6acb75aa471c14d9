/**
 * `email-pipeline dlq list|redrive|delete|purge|tasks|cancel`: what is in a DLQ and why; send it
 * back (all of it with the native move task, or selectively by code or key); delete selectively
 * (also to remove a person's data) or all; follow and cancel a move task. `--queue` picks the
 * send DLQ (default), the ledger's or the topic subscription's. The operations are dlq-operations.ts.
 */
import { parseCommand, wholeNumber } from './args';
import type { Command, Io } from './command';
import { DEFAULT_STALL_SECONDS, dlqName, operate, QUEUES, type DlqOptions, type QueueName } from './dlq-operations';
import { awsFailure, suggestion, UsageError } from './errors';
import { resolveTarget } from './target';

/** The ledger DLQ mapping's maxConcurrency (lib/construct/ledger/functions.ts, deadLetterMaxConcurrency). */
const LEDGER_REDRIVE_CONCURRENCY = 2;

export const DLQ_USAGE = `Usage: email-pipeline dlq list    [--summary | --code C | --key K] [--max N] [--json] [--queue Q] [--stack NAME] [--region R]
       email-pipeline dlq redrive [--code C | --key K] [--force] [--max N | --rate N] [--queue Q] [--stack NAME] [--region R]
       email-pipeline dlq redrive --queue ledger [--stall SECONDS] [--stack NAME] [--region R]
       email-pipeline dlq delete  (--key K | --code C) [--queue Q] [--stack NAME] [--region R]
       email-pipeline dlq purge   --yes-delete-all-messages [--queue Q] [--stack NAME] [--region R]
       email-pipeline dlq tasks   [--queue Q] [--stack NAME] [--region R]
       email-pipeline dlq cancel  --task HANDLE [--stack NAME] [--region R]

--queue: send (the send function's DLQ, the default), ledger (SES events the ledger could not
record) or subscription (deliveries SNS could not make to the work queue).
redrive with --code or --key moves only those messages (receive, send to the source queue with
the publisher's attributes, delete); without, every message goes back with SQS's move task
(--rate caps its messages per second; tasks shows its progress, cancel stops it). Codes that a
redrive cannot fix (KeyReusedWithDifferentContent, InvalidMessage, ...) are refused without --force.
redrive --queue ledger never sends to the ledger's buffer (only SES's events rule may): it enables the
ledger function's own mapping of the ledger DLQ until the DLQ is empty, or has not shrunk for --stall
seconds (default ${DEFAULT_STALL_SECONDS}: events the function fails on return to the DLQ), then disables it (also on Ctrl-C).
delete --key removes that key's messages for good (also to remove a person's data).
Without --stack it works on the local pipeline (npm start).`;

const SUBCOMMANDS = ['list', 'redrive', 'delete', 'purge', 'tasks', 'cancel'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

function isSubcommand(word: string): word is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(word);
}

const OPTIONS = {
  max: { type: 'string' },
  rate: { type: 'string' },
  stall: { type: 'string' },
  json: { type: 'boolean' },
  summary: { type: 'boolean' },
  code: { type: 'string' },
  key: { type: 'string' },
  force: { type: 'boolean' },
  queue: { type: 'string' },
  task: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  'yes-delete-all-messages': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which options each subcommand takes (beyond --stack, --region and --help). */
const ALLOWED: Readonly<Record<Subcommand, readonly string[]>> = {
  list: ['summary', 'code', 'key', 'max', 'json', 'queue'],
  redrive: ['code', 'key', 'force', 'max', 'rate', 'queue', 'stall'],
  delete: ['code', 'key', 'queue'],
  purge: ['yes-delete-all-messages', 'queue'],
  tasks: ['queue', 'json'],
  cancel: ['task'],
};

function isQueue(word: string): word is QueueName {
  return (QUEUES as readonly string[]).includes(word);
}

/** The options of a dlq command line, checked; throws UsageError naming what is wrong. */
export function dlqOptions(
  argv: readonly string[],
  io: Pick<Io, 'out'>,
): { sub: Subcommand; options: DlqOptions; stack?: string; region?: string } | undefined {
  const parsed = parseCommand(argv, OPTIONS, DLQ_USAGE, io);
  if (!parsed) return undefined;
  const { values, positionals } = parsed;
  const [sub, ...extra] = positionals;
  if (sub === undefined) throw new UsageError(`say what to do: ${SUBCOMMANDS.join(', ')}`, DLQ_USAGE);
  if (!isSubcommand(sub)) {
    throw new UsageError(`unknown dlq command "${sub}"${suggestion(sub, SUBCOMMANDS)}`, DLQ_USAGE);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ''}"`, DLQ_USAGE);
  for (const name of Object.keys(values)) {
    if (['stack', 'region', 'help'].includes(name) || ALLOWED[sub].includes(name)) continue;
    throw new UsageError(`--${name} does not go with dlq ${sub}`, DLQ_USAGE);
  }
  const max = wholeNumber('max', values.max, 1, DLQ_USAGE);
  const rate = wholeNumber('rate', values.rate, 1, DLQ_USAGE);
  if (rate !== undefined && rate > 500)
    throw new UsageError('--rate is at most 500 (the SQS move task limit)', DLQ_USAGE);
  if (sub === 'purge' && !values['yes-delete-all-messages']) {
    throw new UsageError(
      'purge deletes every message in the DLQ for good: add --yes-delete-all-messages to confirm',
      DLQ_USAGE,
    );
  }
  if (sub === 'delete' && values.key === undefined && values.code === undefined) {
    throw new UsageError('say which messages: dlq delete --key K (or --code C); purge deletes all', DLQ_USAGE);
  }
  if (sub === 'cancel' && values.task === undefined) {
    throw new UsageError('say which task: dlq cancel --task HANDLE (dlq tasks lists them)', DLQ_USAGE);
  }
  if (values.summary && (values.code !== undefined || values.key !== undefined)) {
    throw new UsageError('--summary counts every message by code: leave out --code and --key', DLQ_USAGE);
  }
  const selective = values.code !== undefined || values.key !== undefined;
  if (sub === 'redrive' && rate !== undefined && (selective || max !== undefined)) {
    throw new UsageError(
      '--rate goes with the move task (redrive of every message, without --code, --key or --max)',
      DLQ_USAGE,
    );
  }
  const queue = values.queue ?? 'send';
  if (!isQueue(queue)) throw new UsageError(`unknown queue "${queue}"${suggestion(queue, QUEUES)}`, DLQ_USAGE);
  const stall = wholeNumber('stall', values.stall, 1, DLQ_USAGE);
  if (sub === 'redrive') ledgerRedriveOptions(queue, { ...values, stall });
  return {
    sub,
    ...(values.stack !== undefined ? { stack: values.stack } : {}),
    ...(values.region !== undefined ? { region: values.region } : {}),
    options: {
      queue,
      json: values.json === true,
      summary: values.summary === true,
      force: values.force === true,
      ...(values.code !== undefined ? { code: values.code } : {}),
      ...(values.key !== undefined ? { key: values.key } : {}),
      ...(values.task !== undefined ? { task: values.task } : {}),
      ...(max !== undefined ? { max } : {}),
      ...(rate !== undefined ? { rate } : {}),
      ...(stall !== undefined ? { stallSeconds: stall } : {}),
    },
  };
}

/** What a redrive of the ledger DLQ refuses (and --stall, which only it takes). */
function ledgerRedriveOptions(
  queue: QueueName,
  values: { code?: string; key?: string; max?: string; rate?: string; stall?: number },
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
  if (values.max !== undefined || values.rate !== undefined) {
    throw new UsageError(
      `--${values.max !== undefined ? 'max' : 'rate'} does not go with --queue ledger: the ledger function reads its DLQ (at most ${LEDGER_REDRIVE_CONCURRENCY} invocations at once)`,
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
    const target = await resolveTarget({ stack: checked.stack, region: checked.region });
    try {
      await operate(sub, target, options, io);
    } catch (error) {
      throw awsFailure(`Could not ${sub} ${dlqName(options.queue)} of ${target.description}`, error, !target.local);
    }
  },
};
