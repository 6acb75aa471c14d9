/**
 * Commands that delete or move messages or records (dlq delete, purge and redrive, resend) ask
 * first, or take `--yes`; with `--dry-run` they say what they would do and change nothing. With
 * no terminal to ask on (CI, a pipe) and neither flag, the command is a usage error, found before
 * any AWS call.
 */
import type { Io } from './command';
import { OperationError, UsageError } from './errors';

/** The options of a command that changes something for good. */
export const CONFIRM_OPTIONS = {
  yes: { type: 'boolean', short: 'y' },
  'dry-run': { type: 'boolean' },
} as const;

export const CONFIRM_SYNOPSIS = '[--yes | --dry-run]';

/** What the help of such a command says about them. */
export const CONFIRM_HELP = `It asks before it changes anything (y/N); --yes goes ahead without asking (needed with
no terminal to ask on, as in CI); --dry-run says what it would do and changes nothing.`;

/** How a command that changes something for good goes on. */
export type Consent = 'dry-run' | 'yes' | 'ask';

/**
 * Whether to ask, go ahead or only say what would be done. Throws UsageError when both flags are
 * given, or when it would have to ask and cannot (no terminal on stdin).
 */
export function consent(
  values: { readonly yes?: boolean | undefined; readonly 'dry-run'?: boolean | undefined },
  what: string,
  usage: string,
  io: Pick<Io, 'interactive'>,
): Consent {
  if (values.yes && values['dry-run']) {
    throw new UsageError('--yes and --dry-run do not go together: --dry-run changes nothing', usage);
  }
  if (values['dry-run']) return 'dry-run';
  if (values.yes) return 'yes';
  if (io.interactive) return 'ask';
  throw new UsageError(
    `${what}: with no terminal to ask on, add --yes to go ahead, or --dry-run to see what it would do`,
    usage,
  );
}

/** Asks `question` (y/N) when `mode` is `ask`; throws OperationError (exit 1, nothing done) unless the answer is yes. */
export async function confirmed(mode: Consent, question: string, io: Io): Promise<void> {
  if (mode !== 'ask') return;
  const answer = io.ask ? await io.ask(`${question} [y/N] `) : '';
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new OperationError('Not confirmed: nothing was changed.');
}
