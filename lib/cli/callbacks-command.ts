/**
 * `email-pipeline callbacks list|redrive|replay|enable`: the callbacks (every status change of a key
 * POSTed to its publisher's URL) as an operator handles them. list: the callbacks DLQ with each
 * one's reason, or (--history) a key's stored callbacks; redrive: dead letters back to the callbacks
 * queue, for a fresh retry window; replay: stored callbacks POSTed again, with their own webhook-ids,
 * once per replay run; enable: a callback a receiver's 410 Gone disabled, tried again.
 *
 * Where they are: the `Callbacks` of the pipeline's outputs (callbacks.ts reads them); what is read
 * and changed: callback-store.ts.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { idempotencyKeyIssues } from '../../lambdas/kernel/contract/index';
import { sqsClient } from '../dlq/operations';
import { parseCommand } from './args';
import {
  callbackKey,
  callbacksOf,
  checkCallbackTarget,
  formatCallbackLetter,
  formatCallbackRow,
  targetOf,
  type CallbackOutputs,
  type CallbackRow,
  type CallbackSelector,
} from './callbacks';
import {
  callbacksOfKey,
  callbacksSince,
  enableCallback,
  readCallbackLetters,
  redriveCallbacks,
  sendReplays,
} from './callback-store';
import type { Command, Io } from './command';
import { confirmed, consent, CONFIRM_OPTIONS, type Consent } from './confirm';
import { sinceTime } from './deliveries';
import { awsFailure, suggestion, UsageError } from './errors';
import { printable } from './printable';
import { TEAM_OPTION, teamOption } from './team-option';
import { resolveTarget, TARGET_HELP, TARGET_OPTIONS, TARGET_SYNOPSIS, targetOptions, type Target } from './target';

const T = TARGET_SYNOPSIS;

export const CALLBACKS_USAGE = `Usage: email-pipeline callbacks list    [--key K... [--history]] [--team NAME] [--json] ${T}
       email-pipeline callbacks redrive [--key K...] [--team NAME] [--yes | --dry-run] [--json] ${T}
       email-pipeline callbacks replay  (--key K... | --since TIME) [--team NAME] [--yes | --dry-run] [--json] ${T}
       email-pipeline callbacks enable  [--team NAME] [--json] ${T}

A callback is one POST per status change of a key to the publisher's URL (callbackUrl, or
teams.<name>.callbackUrl), signed per Standard Webhooks, retried for a day, never repeated after a 2xx.
list: the callbacks DLQ, one line per callback given up on (key, team, status, first try, receives
and the reason: the receiver's answer, or the retry window spent). With --history, the stored
callbacks of the keys instead (the callbacks table: webhook id, status, state, attempts, last
result, delivered at).
redrive: moves dead letters back to the callbacks queue (body and attributes, without the reason):
each gets a fresh retry window.
replay: POSTs stored callbacks again, each with its own webhook-id and body: those of --key K, or
of every change at or after --since TIME (an ISO time, 2026-12-03T08:00:00Z, or an age: 30m, 2h,
7d; kept 14 days). One replay id per run: the function POSTs each callback once per replay.
enable: tries a callback again that a 410 Gone from its receiver disabled (a team's with --team).
--key K selects a key's callbacks and may be repeated; a command about one key elsewhere takes it
as its argument. --team NAME: a team's keys are its own (<team>#<key>), so --key K selects <team>#K,
and without --key only the team's callbacks are taken. Without --team, --key K is a key of the
pipeline's own topics, and a selection without --key takes every team's callbacks.
redrive and replay ask before they change anything (y/N); --yes goes ahead without asking (needed
with no terminal to ask on, as in CI); --dry-run says what they would do and changes nothing.
--json prints one JSON object per result.

${TARGET_HELP}`;

const SUBCOMMANDS = ['list', 'redrive', 'replay', 'enable'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const OPTIONS = {
  key: { type: 'string', multiple: true },
  ...TEAM_OPTION,
  history: { type: 'boolean' },
  since: { type: 'string' },
  json: { type: 'boolean' },
  ...CONFIRM_OPTIONS,
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which options each subcommand takes (beyond the target's and --help). */
const ALLOWED: Readonly<Record<Subcommand, readonly string[]>> = {
  list: ['key', 'team', 'history', 'json'],
  redrive: ['key', 'team', 'yes', 'dry-run', 'json'],
  replay: ['key', 'team', 'since', 'yes', 'dry-run', 'json'],
  enable: ['team', 'json'],
};

/** A callbacks command line, checked. */
export interface CallbacksOptions {
  readonly sub: Subcommand;
  readonly team?: string;
  /** The keys as typed (for what is printed) and as the callbacks table knows them (ledger keys). */
  readonly keys?: readonly { readonly given: string; readonly key: string }[];
  readonly history: boolean;
  /** replay --since: ISO time. */
  readonly since?: string;
  readonly json: boolean;
  readonly mode?: Consent;
}

const isSubcommand = (word: string): word is Subcommand => (SUBCOMMANDS as readonly string[]).includes(word);

/** The options of a callbacks command line, checked before any AWS call; throws UsageError naming what is wrong. */
export function callbacksOptions(
  argv: readonly string[],
  io: Pick<Io, 'out' | 'interactive'>,
  now = Date.now(),
): { options: CallbacksOptions; target: ReturnType<typeof targetOptions> } | undefined {
  const parsed = parseCommand(argv, OPTIONS, CALLBACKS_USAGE, io);
  if (!parsed) return undefined;
  const { values, positionals } = parsed;
  const [sub, ...extra] = positionals;
  if (sub === undefined) throw new UsageError(`say what to do: ${SUBCOMMANDS.join(', ')}`, CALLBACKS_USAGE);
  if (!isSubcommand(sub)) {
    throw new UsageError(`unknown callbacks command "${sub}"${suggestion(sub, SUBCOMMANDS)}`, CALLBACKS_USAGE);
  }
  if (extra.length > 0) {
    throw new UsageError(`unexpected argument "${extra[0] ?? ''}" (select keys with --key K)`, CALLBACKS_USAGE);
  }
  for (const name of Object.keys(values)) {
    if (['stack', 'pipeline', 'region', 'help'].includes(name) || ALLOWED[sub].includes(name)) continue;
    throw new UsageError(`--${name} does not go with callbacks ${sub}`, CALLBACKS_USAGE);
  }
  const team = teamOption(values.team, CALLBACKS_USAGE);
  const keys = values.key?.map((given) => {
    const problem = idempotencyKeyIssues(given)[0]?.reason;
    if (problem !== undefined) {
      throw new UsageError(`--key ${JSON.stringify(given)} cannot be a dedupe key: it ${problem}`, CALLBACKS_USAGE);
    }
    return { given, key: callbackKey(team, given) };
  });
  if (values.history && keys === undefined) {
    throw new UsageError('--history lists the stored callbacks of a key: say which with --key K', CALLBACKS_USAGE);
  }
  let since: string | undefined;
  if (sub === 'replay') {
    if ((keys === undefined) === (values.since === undefined)) {
      throw new UsageError(
        "say which callbacks to replay: --key K (a key's) or --since TIME (every change since then), not both",
        CALLBACKS_USAGE,
      );
    }
    if (values.since !== undefined) {
      since = sinceTime(values.since, now);
      if (since === undefined) {
        throw new UsageError(
          `--since takes an ISO time (2026-12-03T08:00:00Z) or an age (30m, 2h, 7d), got "${values.since}"`,
          CALLBACKS_USAGE,
        );
      }
    }
  }
  const change =
    sub === 'redrive'
      ? 'callbacks redrive moves dead letters back to the callbacks queue'
      : sub === 'replay'
        ? 'callbacks replay POSTs stored callbacks again'
        : undefined;
  const mode = change === undefined ? undefined : consent(values, change, CALLBACKS_USAGE, io);
  return {
    target: targetOptions(values, CALLBACKS_USAGE),
    options: {
      sub,
      ...(team !== undefined ? { team } : {}),
      ...(keys !== undefined ? { keys } : {}),
      history: values.history === true,
      ...(since !== undefined ? { since } : {}),
      json: values.json === true,
      ...(mode !== undefined ? { mode } : {}),
    },
  };
}

/** What the options select, as printed after "N callback(s)": `of key K`, `of team T`, `of key K of team T`. */
export function describeSelection(options: Pick<CallbacksOptions, 'keys' | 'team' | 'since'>): string {
  const keys = options.keys?.map((k) => printable(k.given)) ?? [];
  return [
    keys.length > 0 ? `of key ${keys.join(' or ')}` : '',
    options.team !== undefined ? `of team ${options.team}` : '',
    options.since !== undefined ? `since ${options.since}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

function selectorOf(options: CallbacksOptions): CallbackSelector {
  return {
    ...(options.keys !== undefined ? { keys: options.keys.map((k) => k.key) } : {}),
    ...(options.team !== undefined ? { team: options.team } : {}),
  };
}

/** What one run works with. */
interface Context {
  readonly target: Target;
  readonly callbacks: CallbackOutputs;
  readonly options: CallbacksOptions;
  readonly io: Io;
  readonly sqs: SQSClient;
  readonly db: DynamoDBDocumentClient;
  /** `the callbacks DLQ of <target>`. */
  readonly dlq: string;
}

const count = (n: number, what = 'callback') => `${n} ${what}(s)`;
const selection = (options: CallbacksOptions) => {
  const text = describeSelection(options);
  return text ? ` ${text}` : '';
};

async function list({ callbacks, options, io, sqs, db, dlq, target }: Context): Promise<void> {
  if (options.history) {
    for (const { given, key } of options.keys ?? []) {
      const rows = await callbacksOfKey(db, callbacks.tableName, key);
      for (const row of rows) io.out(options.json ? JSON.stringify(row) : formatCallbackRow(row));
      if (!options.json && rows.length === 0) {
        io.out(
          `No callback is stored for key ${printable(given)}${options.team ? ` of team ${options.team}` : ''} in ${target.description}.`,
        );
      }
    }
    return;
  }
  const { letters } = await readCallbackLetters(sqs, callbacks.deadLetterQueueUrl, selectorOf(options));
  if (options.json) {
    for (const letter of letters) io.out(JSON.stringify(letter));
  } else if (letters.length === 0) {
    io.out(`${dlq.charAt(0).toUpperCase()}${dlq.slice(1)} holds no callback${selection(options)}.`);
  } else {
    for (const letter of letters) io.out(formatCallbackLetter(letter));
    io.err(`${count(letters.length)}${selection(options)} in ${dlq}.`);
  }
}

async function redrive({ callbacks, options, io, sqs, dlq }: Context): Promise<void> {
  const selector = selectorOf(options);
  const queues = { dlqUrl: callbacks.deadLetterQueueUrl, sourceQueueUrl: callbacks.queueUrl };
  if (options.mode !== 'yes') {
    const { letters, scanned } = await readCallbackLetters(sqs, queues.dlqUrl, selector);
    const sentence = `${count(letters.length)}${selection(options)} from ${dlq} back to the callbacks queue (${scanned} scanned)`;
    if (options.mode === 'dry-run') {
      if (options.json) {
        io.out(JSON.stringify({ action: 'redrive', dryRun: true, count: letters.length, scanned, callbacks: letters }));
        return;
      }
      for (const letter of letters) io.out(formatCallbackLetter(letter));
      io.out(`Would move ${sentence}. Nothing was changed (--dry-run).`);
      return;
    }
    if (letters.length === 0) {
      io.out(
        `${dlq.charAt(0).toUpperCase()}${dlq.slice(1)} holds no callback${selection(options)}: nothing to redrive (${scanned} scanned).`,
      );
      return;
    }
    await confirmed('ask', `Move ${sentence}?`, io);
  }
  const { moved, scanned } = await redriveCallbacks(sqs, queues, selector);
  if (options.json) io.out(JSON.stringify({ action: 'redrive', moved, scanned }));
  else {
    io.out(
      `Moved ${count(moved)}${selection(options)} from ${dlq} back to the callbacks queue (${scanned} scanned): ` +
        'each is tried again, with a fresh retry window.',
    );
  }
}

async function replay({ callbacks, options, io, sqs, db, target }: Context): Promise<void> {
  const rows: CallbackRow[] = [];
  if (options.since !== undefined) {
    rows.push(
      ...(await callbacksSince(
        db,
        callbacks.tableName,
        options.since,
        options.team !== undefined ? { team: options.team } : {},
      )),
    );
  } else {
    for (const { key } of options.keys ?? []) rows.push(...(await callbacksOfKey(db, callbacks.tableName, key)));
  }
  const what = `${count(rows.length, 'stored callback')}${selection(options)} of ${target.description}`;
  if (rows.length === 0) {
    if (options.json)
      io.out(JSON.stringify({ action: 'replay', count: 0, ...(options.mode === 'dry-run' ? { dryRun: true } : {}) }));
    else io.out(`No callback is stored${selection(options)} in ${target.description}: nothing to replay.`);
    return;
  }
  if (options.mode === 'dry-run') {
    if (options.json) {
      io.out(JSON.stringify({ action: 'replay', dryRun: true, count: rows.length, callbacks: rows }));
      return;
    }
    for (const row of rows) io.out(formatCallbackRow(row));
    io.out(`Would replay ${what}: each POSTed again with its webhook-id. Nothing was changed (--dry-run).`);
    return;
  }
  await confirmed(
    options.mode ?? 'ask',
    `Replay ${what} (each POSTed again to its receiver, with its webhook-id)?`,
    io,
  );
  const replayId = randomUUID();
  const sent = await sendReplays(sqs, callbacks.queueUrl, rows, replayId);
  if (options.json) io.out(JSON.stringify({ action: 'replay', replayId, count: sent }));
  else {
    io.out(
      `Replayed ${count(sent)}${selection(options)} of ${target.description}: replay ${replayId}. Each is POSTed ` +
        'again with its webhook-id, once for this replay (callbacks list --history --key K shows its tries).',
    );
  }
}

async function enable({ callbacks, options, io, db, target }: Context): Promise<void> {
  const was = await enableCallback(db, callbacks.tableName, options.team);
  const whose = options.team !== undefined ? `The callback of team ${options.team}` : "The pipeline's callback";
  if (options.json) {
    io.out(
      JSON.stringify({ action: 'enable', target: targetOf(options.team), wasDisabled: was !== undefined, ...was }),
    );
    return;
  }
  if (was === undefined) {
    io.out(`${whose} of ${target.description} was not disabled: nothing to do.`);
    return;
  }
  io.out(
    `${whose} of ${target.description} was disabled since ${printable(was.disabledAt)}` +
      `${was.disabledReason !== undefined ? ` (${printable(was.disabledReason)})` : ''}: enabled, the next status change is POSTed.`,
  );
  io.err(
    `Callbacks given up on while it was disabled are in the callbacks DLQ: callbacks redrive${options.team !== undefined ? ` --team ${options.team}` : ''} sends them again.`,
  );
}

const OPERATIONS: Readonly<Record<Subcommand, (context: Context) => Promise<void>>> = { list, redrive, replay, enable };

export const callbacksCommand: Command = {
  name: 'callbacks',
  summary: 'list, redrive, replay or enable the callbacks (status changes POSTed to publishers)',
  usage: CALLBACKS_USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const checked = callbacksOptions(argv, io);
    if (!checked) return;
    const { options } = checked;
    const target = await resolveTarget(checked.target);
    const callbacks = callbacksOf(target.outputs, target.description);
    if (options.team !== undefined || options.sub === 'enable') {
      checkCallbackTarget(target.outputs, options.team, target.description);
    }
    const sqs = sqsClient(target);
    const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
    const dlq = `the callbacks DLQ of ${target.description}`;
    try {
      await OPERATIONS[options.sub]({ target, callbacks, options, io, sqs, db, dlq });
    } catch (error) {
      throw awsFailure(`Could not ${options.sub} the callbacks of ${target.description}`, error, !target.local);
    } finally {
      sqs.destroy();
      db.destroy();
    }
  },
};
