/**
 * `--code` is checked against the codes a dead letter can carry: this test reads the send
 * function's sources for every code it dead-letters with, so that a new one cannot be missing
 * from lib/cli/codes.ts (and refused as a typo).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, knownCode } from '../../../../lib/cli/codes';
import { UsageError } from '../../../../lib/cli/errors';
import { NEVER_REDRIVE } from '../../../../lib/dlq/select';

const LAMBDAS = path.join(__dirname, '..', '..', '..', '..', 'lambdas');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return name.endsWith('.ts') ? [file] : [];
  });
}

/** Codes the sources give a permanent failure, or the end of the retry budget: what reaches a DLQ with a code. */
function codesInSources(): Set<string> {
  const found = new Set<string>();
  const literal = /(?:\bfail|InvalidMessageError|PermanentError)\(\s*'([A-Za-z]+)'/g;
  for (const file of sources(LAMBDAS)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(literal)) found.add(match[1] ?? '');
    // SES errors that are permanent keep SES's own name (classify.ts).
    const permanent = /PERMANENT_SES_ERRORS = new Set\(\[([^\]]*)\]\)/.exec(text)?.[1];
    for (const match of permanent?.matchAll(/'([A-Za-z]+)'/g) ?? []) found.add(match[1] ?? '');
    // Error classes of their own: permanent ones, and the end of the retry budget (a PipelineError whose
    // class is its last error's). Retryable ones are retried and reach the DLQ only through the latter.
    for (const match of text.matchAll(/extends (?:PermanentError|PipelineError) \{[^}]*?super\(\s*'([A-Za-z]+)'/g)) {
      found.add(match[1] ?? '');
    }
  }
  return found;
}

test('every code the send function dead-letters with is known', () => {
  const found = codesInSources();
  expect(found.size).toBeGreaterThan(10);
  expect([...found].filter((code) => !Object.hasOwn(ERROR_CODES, code)).sort()).toEqual([]);
  expect(found).toContain('RetryBudgetExhausted');
  expect(found).toContain('MessageRejected');
});

test('the codes never redriven are known codes', () => {
  expect(Object.keys(NEVER_REDRIVE).filter((code) => !Object.hasOwn(ERROR_CODES, code))).toEqual([]);
});

test('a known code passes; a typo is a usage error with the closest code; nothing is matched loosely', () => {
  expect(knownCode('InvalidJson', 'u')).toBe('InvalidJson');
  expect(() => knownCode('invalidjson', 'u')).toThrow(UsageError);
  expect(() => knownCode('__proto__', 'u')).toThrow('unknown error code "__proto__"');
  expect(() => knownCode('KeyReused', 'u')).toThrow('(did you mean KeyReusedWithDifferentContent?)');
});
