/**
 * How the operator CLI fails. Every command follows one convention: exit 0 on success, 1 when
 * the operation failed (with what to do next), 2 on a usage error (with a short usage line).
 */

import { distance } from 'fastest-levenshtein';

/** The command line is wrong: exit 2, with the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The usage of the command at fault (the top-level usage when none). */
    readonly usage?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The operation failed: exit 1. The message says what to do next. */
export class OperationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperationError';
  }
}

/** The known word closest to `word` (a typo or a prefix of it), if any is close enough to suggest. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const prefixed = known.filter((k) => word.length >= 2 && k.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: { word: string; score: number } | undefined;
  for (const candidate of known) {
    // Two edits cover a swap of neighbours (dql -> dlq), which Levenshtein counts twice.
    const score = distance(word.toLowerCase(), candidate.toLowerCase());
    if (score <= Math.max(2, Math.floor(candidate.length / 3)) && (best === undefined || score < best.score)) {
      best = { word: candidate, score };
    }
  }
  return best?.word;
}

/** " (did you mean X?)" or nothing. */
export function suggestion(word: string, known: readonly string[], render = (k: string) => k): string {
  const match = closest(word, known);
  return match === undefined ? '' : ` (did you mean ${render(match)}?)`;
}

/**
 * What to do when the profile's role (its `role_arn`) could not be assumed: the redrive role the
 * stack creates admits only the principals it lists, and nobody while none is listed.
 */
export const ASSUME_ROLE_DENIED =
  "These credentials may not assume the profile's role (role_arn in AWS_PROFILE's config). If it is the stack's " +
  'redrive role (output RedriveRoleArn): it admits only the principals listed in redrivePrincipals (or ' +
  'redriveRoleAssumedBy), and nobody while none is listed. List yours (cdk.json context ' +
  '"emailPipeline:redrivePrincipals", or the construct props) and deploy again; docs/operators.md, "The redrive role"';

/**
 * An AWS SDK error as the command's OperationError: what failed, what AWS said, and what to do
 * next (advice about credentials, permissions and the network only when `onAws`: the local
 * emulators take any credentials).
 */
export function awsFailure(what: string, error: unknown, onAws = true): OperationError {
  if (error instanceof OperationError) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: string;
    message?: string;
    code?: string;
  };
  const name = e.name ?? 'Error';
  const message = e.message ?? String(error);
  const said = `${name}: ${message}`;
  let next = '';
  if (!onAws) {
    // Nothing to add: the message names the local pipeline.
  } else if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    next =
      'No AWS credentials were found: set AWS_PROFILE (after aws sso login, for an SSO profile), ' +
      'or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.';
  } else if (/ExpiredToken|token .*expired/i.test(`${name} ${message}`)) {
    next = 'The AWS credentials have expired: refresh them (aws sso login) and try again.';
  } else if (/sts:AssumeRole\b/.test(message)) {
    next = ASSUME_ROLE_DENIED;
  } else if (/AccessDenied|not authorized|AuthorizationError/i.test(`${name} ${message}`)) {
    next =
      'The credentials lack a permission this command needs: the README lists them under "What an operator needs on AWS".';
  } else if (/Stack with id .* does not exist/i.test(message)) {
    next = 'Check the stack name (--stack) and the region (--region or AWS_REGION).';
  } else if (
    ['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(
      e.code ?? '',
    ) ||
    name === 'TimeoutError'
  ) {
    next = 'AWS could not be reached: check the network (proxy, VPN) and the region.';
  }
  return new OperationError(`${what}: ${said}${next ? `. ${next}` : ''}`);
}
