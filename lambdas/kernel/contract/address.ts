/**
 * Email addresses as people write them (contract v1.1): `ada@example.com`,
 * `Ada Lovelace <ada@example.com>`, `"Lovelace, Ada" <ada@example.com>`,
 * non-ASCII display names and internationalised domains. Each is turned into
 * the form SES v2 accepts: ASCII only, the domain in punycode, a non-ASCII
 * display name as RFC 2047 encoded-words. Pure, no I/O.
 */
import { domainToASCII } from 'node:url';

export const ADDRESS_LIMITS = {
  /** RFC 5321 caps a path at 254 characters in practice. */
  maxAddressLength: 254,
  /** RFC 5321: at most 64 characters before the @. */
  maxLocalPartLength: 64,
  /** Characters of a display name, before encoding. */
  maxDisplayNameLength: 128,
} as const;

// A plain local part: ASCII atoms joined by dots, no quoting (SES wants 7-bit ASCII here).
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** Characters that reorder or hide text. Joiners (U+200C/D) stay allowed: scripts and emoji need them. */
export const BIDI_OR_INVISIBLE = /[\u200b\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** RFC 5322 atext plus spaces: a display name of only these needs no quotes. */
const PHRASE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$/;

/** A parsed address: what SES is given, and the bare address for IAM, masks and comparisons. */
export interface ParsedAddress {
  /** `local@domain` with the domain in punycode. */
  readonly address: string;
  /** The display name as written (unquoted), if any. */
  readonly displayName?: string;
  /** The form handed to SES: the address, or `name <address>` with the name quoted or encoded. */
  readonly formatted: string;
}

export type AddressResult =
  { readonly ok: true; readonly value: ParsedAddress } | { readonly ok: false; readonly reason: string };

function problem(reason: string): AddressResult {
  return { ok: false, reason };
}

/** Checks and normalises `local@domain` (no display name). */
function addrSpec(value: string): { address: string } | { reason: string } {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return { reason: 'must be an email address like name@example.com' };
  const local = value.slice(0, at);
  const written = value.slice(at + 1);
  if (/[^\x20-\x7e]/.test(local)) {
    return { reason: 'has a non-ASCII local part (before the @): SES accepts only ASCII there' };
  }
  if (local.length > ADDRESS_LIMITS.maxLocalPartLength || !LOCAL_PART.test(local)) {
    return { reason: 'has an invalid local part (before the @)' };
  }
  // An internationalised domain becomes punycode (IDNA, as WHATWG URL does); ASCII stays as written.
  const domain = /[^\x20-\x7e]/.test(written) ? domainToASCII(written) : written;
  if (domain === '' || !DOMAIN.test(domain)) return { reason: 'has an invalid domain (after the @)' };
  const address = `${local}@${domain}`;
  if (address.length > ADDRESS_LIMITS.maxAddressLength) {
    return { reason: `must be at most ${ADDRESS_LIMITS.maxAddressLength} characters` };
  }
  return { address };
}

/** Splits `name <addr>`; undefined when there are no angle brackets. */
function splitDisplayName(value: string): { name: string; spec: string } | { reason: string } | undefined {
  if (!value.includes('<') && !value.includes('>')) return undefined;
  const open = value.lastIndexOf('<');
  if (open < 0 || !value.endsWith('>') || value.indexOf('>') !== value.length - 1) {
    return { reason: 'must be an address, or a display name followed by <address>' };
  }
  const spec = value.slice(open + 1, -1).trim();
  let name = value.slice(0, open).trim();
  if (name.startsWith('"')) {
    const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(name);
    if (!quoted) return { reason: 'has a display name with unbalanced quotes' };
    name = (quoted[1] ?? '').replace(/\\(.)/g, '$1');
  } else if (/[<>"]/.test(name)) {
    return { reason: 'has a display name with <, > or " outside quotes' };
  }
  return { name, spec };
}

/**
 * RFC 2047 encoded-words (UTF-8, base64), each at most 75 characters, split on
 * character boundaries: what SES asks for a non-ASCII display name.
 */
export function encodeWords(text: string): string {
  const words: string[] = [];
  let chunk = '';
  for (const char of text) {
    // 45 bytes of UTF-8 make 60 base64 characters: 72 with the =?UTF-8?B?...?= around them.
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk !== '') words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
}

/** A display name as it goes into the header: bare, quoted, or encoded. */
export function formatDisplayName(name: string): string {
  if (/[^\x20-\x7e]/.test(name)) return encodeWords(name);
  if (PHRASE.test(name)) return name;
  return `"${name.replace(/(["\\])/g, '\\$1')}"`;
}

/** Why `name` cannot be a display name, or undefined. */
export function displayNameProblem(name: string): string | undefined {
  if (!name.isWellFormed()) return 'contains invalid Unicode (a lone surrogate)';
  if (CONTROL.test(name)) return 'contains control characters';
  if (BIDI_OR_INVISIBLE.test(name)) return 'contains invisible or text-direction characters';
  if (name.length > ADDRESS_LIMITS.maxDisplayNameLength) {
    return `is longer than ${ADDRESS_LIMITS.maxDisplayNameLength} characters`;
  }
  return undefined;
}

/**
 * Parses one address as people write it. The reason of a refusal says what is
 * wrong without repeating the address.
 */
export function parseAddress(value: string): AddressResult {
  if (/[\r\n]/.test(value)) return problem('must not contain CR or LF (header injection)');
  if (!value.isWellFormed()) return problem('contains invalid Unicode (a lone surrogate)');
  if (CONTROL.test(value)) return problem('must not contain control characters');
  if (BIDI_OR_INVISIBLE.test(value)) return problem('must not contain invisible or text-direction characters');
  const trimmed = value.trim();
  const split = splitDisplayName(trimmed);
  if (split !== undefined && 'reason' in split) return problem(split.reason);
  const spec = addrSpec(split?.spec ?? trimmed);
  if ('reason' in spec) return problem(spec.reason);
  const name = split?.name ?? '';
  if (name === '') return { ok: true, value: { address: spec.address, formatted: spec.address } };
  const nameProblem = displayNameProblem(name);
  if (nameProblem !== undefined) return problem(`has a display name that ${nameProblem}`);
  return {
    ok: true,
    value: { address: spec.address, displayName: name, formatted: `${formatDisplayName(name)} <${spec.address}>` },
  };
}

/** Masks an address for logs, display name dropped: `Ada <ada@example.com>` -> `a***@example.com`. */
export function maskAddress(written: string): string {
  const open = written.lastIndexOf('<');
  const close = written.lastIndexOf('>');
  const address = open >= 0 && close > open ? written.slice(open + 1, close).trim() : written.trim();
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/**
 * Masks every address in free text (an SES error message, say) so reasons in
 * logs and DLQ attributes name no recipient: `ada@example.com` -> `a***@example.com`.
 */
export function redactAddresses(text: string): string {
  // Each run of characters that can be part of an address is looked at once: a pattern of the form
  // `X+@X+` would retry every start of a long run without an @ (quadratic: 80 KB took 3 s).
  return text.replace(/[^\s<>()[\]"',;:]+/g, (run) => {
    // An address: an @ with something on either side (a leading @ or a trailing one alone is not).
    const at = run.indexOf('@', 1);
    return at > 0 && at < run.length - 1 ? maskAddress(run) : run;
  });
}
