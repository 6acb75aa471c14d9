/**
 * Text for the operator's terminal. Much of what the CLI prints comes from outside: keys, field names
 * and reasons from message bodies, bounce details from SES events, the arguments it echoes in an
 * error, AWS's error messages. A control character there can move the cursor, rewrite what was
 * printed before, retitle the window or, in some terminals, send keystrokes back (ESC and the C1
 * controls U+0080-U+009F, which some terminals read as ESC sequences too); a text-direction override
 * makes a line read other than it is. Every such character is written as JSON's `\uXXXX` escape.
 * JSON.stringify leaves C1 controls and text-direction characters as they are, but only inside its
 * strings, where `\uXXXX` means the same character: a line of `--json` output stays valid JSON, with
 * the same value.
 */
import type { Io } from './command';

/**
 * C0 controls (tab and line breaks too), DEL, C1 controls, characters that reorder text (bidi marks,
 * embeddings, overrides and isolates) or hide it (zero-width space, word joiner and invisible
 * operators, BOM), the Unicode line and paragraph separators, and lone surrogates. Joiners (U+200C,
 * U+200D) stay: scripts and emoji need them.
 */
const UNPRINTABLE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|[\ud800-\udfff]/gu;

function escape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** One value for a line of output (a key, a reason, an argument): every character above escaped, line breaks included. */
export function printable(value: string): string {
  return value.replace(UNPRINTABLE, escape);
}

/** Lines the CLI writes: as {@link printable}, but the line breaks between them stay. */
export function printableLines(text: string): string {
  return text
    .split('\n')
    .map((line) => printable(line))
    .join('\n');
}

/** An Io whose every line goes through {@link printableLines}: nothing a command prints reaches the terminal raw. */
export function printableIo(io: Io): Io {
  const ask = io.ask;
  return {
    out: (line) => io.out(printableLines(line)),
    err: (line) => io.err(printableLines(line)),
    ...(io.interactive ? { interactive: true } : {}),
    ...(ask ? { ask: (question: string) => ask.call(io, printableLines(question)) } : {}),
  };
}
