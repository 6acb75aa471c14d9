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
