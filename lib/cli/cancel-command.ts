/**
 * `email-pipeline cancel [--json] [--team NAME] [--stack NAME [--pipeline NAME]] [--region R] <key>`: cancel a
 * key not yet sent (a scheduled email, or one still waiting in the queue), so that it is never sent.
 *
 * One signed `DELETE <CancelUrl><key>[?team=NAME]` (lib/status-url.ts) to the stack's cancel URL, with the
 * usual AWS credentials (they need lambda:InvokeFunctionUrl on it: IAM decides who may cancel);
 * without --stack, the local pipeline's status server (npm start). The cancel function writes the
 * cancel (lambdas/status/cancel.ts).
 *
 * Exit codes (main.ts's convention): 0 cancelled, now or already (cancelling twice is harmless);
 * 1 too late, the key is claimed, in progress or sent (its status is printed), or the status URL
 * could not be reached or refused the caller; 2 bad usage or a key that cannot be a dedupe key.
 */
import { SNSClient } from '@aws-sdk/client-sns';
// The kernel's key rules (what lambdas/status/lookup.ts checks too), without its DynamoDB client: the packaged CLI has none.
import { idempotencyKeyIssues } from '../../lambdas/kernel/contract';
import { cancelAtCancelUrl, StatusUrlError, type SigningContext } from '../status-url';
import { parseCommand } from './args';
import type { Command, Io } from './command';
import { OperationError, UsageError } from './errors';
import { printable } from './printable';
import { formatReport } from './status-report';
import { TEAM_OPTION, teamOption, teamTopicsOf } from './team-option';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  output,
  resolveTarget,
  TARGET_HELP,
  TARGET_OPTIONS,
  TARGET_SYNOPSIS,
  targetOptions,
  type Target,
} from './target';

const USAGE = `Usage: email-pipeline cancel [--json] [--team NAME] ${TARGET_SYNOPSIS} <key>

Cancels an email by its dedupe key before it is sent (npm run -s cancel -- <key> in this repository):
it is never sent, and its status becomes cancelled, with when and by whom. Exits 1, printing the
status, when the key is already in progress or sent. Cancelling twice is harmless. A command about
one key takes it as its argument; only dlq selects by --key. (A DLQ move task is stopped with
email-pipeline dlq stop-task.) On a deployed stack the request is signed with your AWS credentials,
whose principal must be granted the pipeline's cancel URL (cancelPrincipals or grantCancel:
lambda:InvokeFunctionUrl on its CancelUrl). --team NAME cancels the key a team published (through its
topic): each team's keys are its own (<team>#<key>), so one team's cancel never touches another's
mail of the same key; without it, the key as published on the pipeline's own topics. A team with
cancelers of its own is cancelled at its own URL (the Teams of the pipeline's outputs), the one
they are granted.

${TARGET_HELP}`;

const OPTIONS = {
  json: { type: 'boolean' },
  ...TEAM_OPTION,
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** The credentials and region that sign for the target: the local pipeline's, or the usual AWS chain. */
async function signingFor(target: Target): Promise<SigningContext> {
  if (target.local) return { credentials: LOCAL_CREDENTIALS, region: LOCAL_REGION };
  const sns = new SNSClient(target.clients.sns);
  try {
    return { credentials: await sns.config.credentials(), region: await sns.config.region() };
  } catch (error) {
    throw new OperationError(
      `No AWS credentials or region to sign the cancel with: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    sns.destroy();
  }
}

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'cancel a key not yet sent (a scheduled email): it is never sent',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    const [key, ...extra] = positionals;
    if (key === undefined) throw new UsageError('say which key, e.g. email-pipeline cancel order-42', USAGE);
    if (extra.length > 0) throw new UsageError(`one key at a time: unexpected argument "${extra[0] ?? ''}"`, USAGE);
    const problem = idempotencyKeyIssues(key)[0]?.reason;
    if (problem !== undefined) {
      throw new UsageError(`${JSON.stringify(key)} cannot be a dedupe key: it ${problem}`, USAGE);
    }
    const team = teamOption(values.team, USAGE);
    const target = await resolveTarget(targetOptions(values, USAGE));
    // A team with cancellers of its own has a cancel URL of its own: the one they are granted.
    const teamUrl = team !== undefined ? teamTopicsOf(target.outputs, team, target.description).CancelUrl : undefined;
    const cancelUrl = teamUrl ?? output(target, 'CancelUrl');
    const signing = await signingFor(target);
    const result = await cancelAtCancelUrl(cancelUrl, key, signing, team !== undefined ? { team } : {}).catch(
      (error: unknown) => {
        const advice =
          error instanceof StatusUrlError && error.statusCode === 403
            ? " (your identity must be granted the pipeline's cancel URL: cancelPrincipals or grantCancel, lambda:InvokeFunctionUrl on the cancel function)"
            : '';
        throw new OperationError(
          `Could not cancel at ${target.description}: ${error instanceof Error ? error.message : String(error)}${advice}`,
        );
      },
    );
    io.out(values.json ? JSON.stringify(result) : formatReport(result.report));
    if (result.outcome === 'too-late') {
      throw new OperationError(
        `not cancelled: ${printable(result.report.key)} is ${result.report.status}, too late to cancel`,
      );
    }
    if (!values.json && result.outcome === 'already-cancelled') io.err('(it was already cancelled: nothing changed)');
  },
};
