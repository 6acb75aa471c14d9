/**
 * How the operator CLI fails. Every command follows one convention: exit 0 on success, 1 when
 * the operation failed (with what to do next), 2 on a usage error (with a short usage line).
 */

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

/** Edit distance between two short words: insertions, deletions, substitutions and swaps of neighbours. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known word closest to `word` (a typo or a prefix of it), if any is close enough to suggest. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const prefixed = known.filter((k) => word.length >= 2 && k.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: { word: string; score: number } | undefined;
  for (const candidate of known) {
    const score = distance(word.toLowerCase(), candidate.toLowerCase());
    if (score <= Math.max(1, Math.floor(candidate.length / 3)) && (best === undefined || score < best.score)) {
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
