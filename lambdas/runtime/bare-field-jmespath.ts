/**
 * Put in place of `@aws-lambda-powertools/jmespath` (and its `/functions` entry) in every Lambda
 * bundle (lib/construct/bundling.ts). Powertools idempotency evaluates JMESPath for its two key
 * settings, and the claim (lambdas/send-email/claim/claim.ts) names a bare field in each: `key` and
 * `email`. A bare field is all this module evaluates, with the library's answers (the field's value
 * when the input is an object that has it, null otherwise; test/unit/lambdas/runtime compares the two).
 * The library's parser, interpreter and function table are 23 KB that every cold start would parse
 * (BENCHMARKS.md, section 4). Any other expression fails, naming why, instead of misbehaving.
 */

const BARE_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

function why(expression: string): string {
  return (
    `JMESPath expression ${JSON.stringify(expression)} is not a bare field name, and only bare fields are ` +
    'bundled in the pipeline functions (lambdas/runtime/bare-field-jmespath.ts): remove the alias in ' +
    'lib/construct/bundling.ts to evaluate full JMESPath'
  );
}

/** JMESPath `search` for a bare field name: the field of an object input, else null. */
export function search(expression: string, data: unknown): unknown {
  if (!BARE_FIELD.test(expression)) throw new Error(why(expression));
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  return expression in data ? (data as Record<string, unknown>)[expression] : null;
}

/**
 * Stands for Powertools' custom JMESPath functions, which IdempotencyConfig builds by default. A
 * bare field calls no function, so it holds none.
 */
export class PowertoolsFunctions {}

/** Stands for the library's base function table, exported beside PowertoolsFunctions. */
export class Functions {}
