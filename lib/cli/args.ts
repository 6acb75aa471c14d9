/**
 * Command-line parsing for the operator CLI: node's parseArgs in strict mode, with its errors
 * turned into usage errors that name the option and suggest the closest known one.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Io } from './command';
import { suggestion, UsageError } from './errors';

export type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed<O extends Options> {
  readonly values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>['values'];
  readonly positionals: readonly string[];
}

/**
 * Parses `argv` against `options` (plus --help); throws {@link UsageError} naming what is wrong.
 * `hidden` options (old spellings kept for scripts) work, but are never suggested for a typo.
 */
export function parse<O extends Options>(
  argv: readonly string[],
  options: O,
  usage: string,
  hidden: readonly string[] = [],
): Parsed<O> {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    return { values, positionals };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(text)?.[1];
    if (unknown !== undefined) {
      const flags = Object.keys(options)
        .filter((name) => !hidden.includes(name))
        .map((name) => `--${name}`);
      throw new UsageError(`unknown option ${unknown}${suggestion(unknown, flags)}`, usage);
    }
    const needsValue = /Option '(?:-\w, )?(--[^ ]+) <value>' argument missing/.exec(text)?.[1];
    if (needsValue !== undefined) throw new UsageError(`${needsValue} needs a value`, usage);
    throw new UsageError(text.split('\n')[0] ?? text, usage);
  }
}

/**
 * A command's arguments: {@link parse}d, or undefined once `--help` has printed the whole usage
 * (to stdout: asked for, it is the result).
 */
export function parseCommand<O extends Options>(
  argv: readonly string[],
  options: O,
  usage: string,
  io: Pick<Io, 'out'>,
  hidden: readonly string[] = [],
): Parsed<O> | undefined {
  const parsed = parse(argv, options, usage, hidden);
  if (!(parsed.values as { help?: boolean }).help) return parsed;
  io.out(usage);
  return undefined;
}

/** A whole number of at least `min` from an option's text, or a usage error naming the option. */
export function wholeNumber(name: string, raw: string | undefined, min: number, usage: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${raw}"`, usage);
  }
  return value;
}

/**
 * Says on stderr that an old spelling was used and what replaces it. The old spellings keep
 * working (scripts do not break), with this warning, until a major version removes them.
 */
export function deprecated(io: Pick<Io, 'err'>, old: string, replacement: string): void {
  io.err(`email-pipeline: ${old} is deprecated: use ${replacement} (the old spelling goes in a future major version)`);
}
