/**
 * `email-pipeline resend <key> --reason R`: sends a key again on purpose, inside its dedupe window,
 * once the cause of its failure is fixed (resend.ts releases it and records who, when and why in
 * its timeline). Then its dead letter, if the send DLQ holds one, is redriven; otherwise the
 * command says how to publish the same message again. Releasing deletes the key's completed send
 * record: it asks first, or takes --yes; --dry-run says what it would do. With --team NAME the key
 * is the one the team published (`<team>#<key>`, as status --team reads it), and every line names it so.
 */
import * as os from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { keyProblem, lookupKey } from '../../lambdas/status/lookup';
import { matches, neverRedriveReason, readAll, redriveSelected } from '../dlq/select';
import { parseCommand } from './args';
import { callerArn, resolveAws } from './aws-rest';
import type { Command, Io } from './command';
import { confirmed, consent, CONFIRM_HELP, CONFIRM_OPTIONS, CONFIRM_SYNOPSIS, type Consent } from './confirm';
import { awsFailure, OperationError, UsageError } from './errors';
import { MAX_REASON_LENGTH, NotReleasable, releasable, releaseKey, type Released } from './resend';
import { lookupTargetFromOutputs } from './status-report';
import { keyOfTeam, TEAM_OPTION, teamOption } from './team-option';
import {
  output,
  resolveTarget,
  TARGET_HELP,
  TARGET_OPTIONS,
  TARGET_SYNOPSIS,
  targetOptions,
  type Target,
  type TargetOptions,
} from './target';

const USAGE = `Usage: email-pipeline resend [--team NAME] <key> --reason R ${CONFIRM_SYNOPSIS} [--json] ${TARGET_SYNOPSIS}

Sends a dedupe key again on purpose, after the cause of its failure was fixed (a template that
failed to render, a suppressed address taken off the list): releases the key (deletes its
completed send record; never while a send holds it), records who, when and why in its timeline
(email-pipeline status shows it), then redrives its dead letter if the DLQ holds one, or says how
to publish the same message again. A command about one key takes it as its argument; only dlq
selects by --key. --team NAME resends the key a team published (through its topic): each team's
keys are its own (<team>#<key>); without it, the key of the pipeline's own topics.
${CONFIRM_HELP}
--json prints what was done as one JSON object.

${TARGET_HELP}`;

const OPTIONS = {
  reason: { type: 'string' },
  json: { type: 'boolean' },
  ...TEAM_OPTION,
  ...CONFIRM_OPTIONS,
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** Who a resend is recorded as: the caller's ARN on AWS, the local user locally. */
async function whoAsks(target: Target): Promise<string> {
  if (target.local) return `local:${os.userInfo().username}`;
  return callerArn(await resolveAws(target.clients.sqs));
}

/**
 * Lines telling how to publish the same message again (the key must be the same); `flags` name the
 * target. A team's key (`asked`, without its `<team>#`) is published again through the team's topic.
 */
export function republishAdvice(key: string, flags: string, team?: { name: string; asked: string }): string[] {
  if (team !== undefined) {
    return [
      `No dead letter of this key is in the DLQ: publish the same message again through team ${team.name}'s topic, under the same key, e.g.`,
      `  email-pipeline publish --topic-arn <team ${team.name}'s TopicArn> --idempotency-key ${JSON.stringify(team.asked)} --to ... --subject ... --text ...`,
      `(or team ${team.name}'s publisher sends it again with the idempotency-key attribute ${JSON.stringify(team.asked)}; the pipeline makes it ${key}).`,
    ];
  }
  return [
    'No dead letter of this key is in the DLQ: publish the same message again under the same key, e.g.',
    `  email-pipeline publish --idempotency-key ${JSON.stringify(key)} --to ... --subject ... --text ...${flags}`,
    '(or the publisher sends it again with the idempotency-key attribute set to this key).',
  ];
}

/** What a resend command line asks for, checked. */
export interface ResendArguments {
  /** The key as given (Unicode NFC), without a team's prefix. */
  readonly asked: string;
  /** The dedupe key acted on: `asked`, or `<team>#<asked>` with --team. */
  readonly key: string;
  readonly team?: string;
  readonly reason: string;
  readonly mode: Consent;
  readonly json: boolean;
  readonly target: TargetOptions;
}

/**
 * The arguments of `resend`, checked before any AWS call (throws UsageError naming what is wrong),
 * or undefined once --help has printed the usage.
 */
export function resendArguments(
  argv: readonly string[],
  io: Pick<Io, 'out' | 'err' | 'interactive'>,
): ResendArguments | undefined {
  const parsed = parseCommand(argv, OPTIONS, USAGE, io);
  if (!parsed) return undefined;
  const { values, positionals } = parsed;
  const [asked, ...extra] = positionals;
  if (asked === undefined) throw new UsageError('say which key: email-pipeline resend <key> --reason R', USAGE);
  if (extra.length > 0) throw new UsageError(`one key at a time: unexpected argument "${extra[0] ?? ''}"`, USAGE);
  const problem = keyProblem(asked);
  if (problem !== undefined)
    throw new UsageError(`${JSON.stringify(asked)} cannot be a dedupe key: it ${problem}`, USAGE);
  const team = teamOption(values.team, USAGE);
  const reason = values.reason?.trim();
  if (!reason) throw new UsageError('say why: --reason "template fixed" (it goes into the key\'s timeline)', USAGE);
  if (reason.length > MAX_REASON_LENGTH) {
    throw new UsageError(`--reason is at most ${MAX_REASON_LENGTH} characters, got ${reason.length}`, USAGE);
  }
  const mode = consent(values, "resend deletes the key's completed send record so that it is sent again", USAGE, io);
  const target = targetOptions(values, USAGE);
  const bare = lookupKey(asked);
  return {
    asked: bare,
    // A team's key lives in its namespace, as the send function makes it (kernel/teams.ts).
    key: keyOfTeam(team, bare),
    ...(team !== undefined ? { team } : {}),
    reason,
    mode,
    json: values.json === true,
    target,
  };
}

/** The arguments of the status command that follows the key: `--team NAME <key>` for a team's. */
function statusArgs(args: ResendArguments): string {
  return args.team !== undefined ? `--team ${args.team} ${args.asked}` : args.key;
}

/** What releasing finds, in words. */
function claimWords(claim: Released): string {
  return claim === 'completed' ? 'its completed send record deleted' : 'it has no send record';
}

export const resendCommand: Command = {
  name: 'resend',
  summary: 'send a key again on purpose (recorded in its timeline)',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const args = resendArguments(argv, io);
    if (!args) return;
    const { key, reason, mode } = args;

    const target = await resolveTarget(args.target);
    let tables;
    try {
      tables = lookupTargetFromOutputs(target.outputs, target.description);
    } catch (error) {
      throw new OperationError(error instanceof Error ? error.message : String(error));
    }
    const dlqUrl = output(target, 'DeadLetterQueueUrl');
    const sourceQueueUrl = output(target, 'QueueUrl');
    const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
    const sqs = new SQSClient({ ...target.clients.sqs, useQueueUrlAsEndpoint: false });
    const release = { db, ...tables };
    const notReleased = (error: unknown): never => {
      if (error instanceof NotReleasable) throw new OperationError(`${key} was not released: ${error.message}`);
      throw awsFailure(`Could not release ${key} on ${target.description}`, error, !target.local);
    };
    const redrivable = (letter: { errorCode: string }) => neverRedriveReason(letter.errorCode) === undefined;
    try {
      const who = await whoAsks(target).catch((error: unknown) => {
        throw awsFailure('Could not tell who you are (sts:GetCallerIdentity)', error);
      });
      if (mode !== 'yes') {
        const claim = await releasable(release, key).catch(notReleased);
        const letters = (
          await readAll(sqs, dlqUrl).catch((error: unknown) => {
            throw awsFailure(`Could not look for the dead letters of ${key}`, error, !target.local);
          })
        ).filter((l) => matches(l, { key }));
        const redrive = letters.filter(redrivable).length;
        if (mode === 'dry-run') {
          if (args.json) {
            io.out(JSON.stringify({ dryRun: true, key, claim, who, reason, deadLetters: redrive }));
            return;
          }
          io.out(
            `Would release ${key} on ${target.description} (${claimWords(claim)}), record a Resend by ${who}: ${reason}, ` +
              (redrive > 0
                ? `then redrive its ${redrive} dead letter(s).`
                : 'then say how to publish it again (no dead letter of it to redrive).') +
              ' Nothing was changed (--dry-run).',
          );
          return;
        }
        await confirmed(
          mode,
          `Release ${key} on ${target.description} (${claimWords(claim)}) so that it is sent again` +
            `${redrive > 0 ? `, and redrive its ${redrive} dead letter(s)` : ''}?`,
          io,
        );
      }
      const at = new Date().toISOString();
      const before = await releaseKey(release, { key, who, reason, at }).catch(notReleased);
      const released = `Released ${key} on ${target.description}${before === 'completed' ? ' (its completed send record deleted)' : ''}; recorded as Resend at ${at} by ${who}: ${reason}`;
      const { moved, skipped } = await redriveSelected(sqs, {
        dlqUrl,
        sourceQueueUrl,
        selector: { key },
        skip: (letter) => !redrivable(letter),
      }).catch((error: unknown) => {
        throw awsFailure(`Released ${key}, but could not look for its dead letter`, error, !target.local);
      });
      if (args.json) {
        io.out(JSON.stringify({ key, released: before, at, who, reason, redriven: moved, neverRedriven: skipped }));
        return;
      }
      io.out(released);
      if (moved > 0) {
        io.out(
          `Redrove ${moved} dead letter(s) of ${key}: it is sent again (email-pipeline status ${statusArgs(args)} follows it).`,
        );
        return;
      }
      if (skipped > 0) {
        io.err(
          `The DLQ holds ${skipped} message(s) of ${key} whose code a redrive cannot fix (dlq list --key shows why): not redriven.`,
        );
      }
      const team = args.team !== undefined ? { name: args.team, asked: args.asked } : undefined;
      for (const line of republishAdvice(key, target.flags, team)) io.out(line);
    } finally {
      db.destroy();
      sqs.destroy();
    }
  },
};
