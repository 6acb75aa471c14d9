/**
 * Contract v1.2, `headers`: custom header fields of an email (name -> value), their declaration
 * and their check. SES takes them on simple and template content (MessageHeader: a name of
 * printable ASCII but `:`, at most 126 characters; a value of printable ASCII; at most 15). Names
 * SES or the pipeline set are refused, and a value may not hold CR or LF (header injection).
 * One-click unsubscribe (RFC 8058) is `List-Unsubscribe` + `List-Unsubscribe-Post`. No I/O.
 */
import type { AddIssue } from './attachments';

export const HEADER_LIMITS = {
  /** SES: at most 15 headers a message. */
  maxHeaders: 15,
  /** SES: a name of at most 126 characters. */
  maxNameLength: 126,
  /**
   * A value's characters. SES takes 995, name and value together 996; 870 keeps a name of 126,
   * its colon and space and the value within 998, the line length RFC 5322 allows.
   */
  maxValueLength: 870,
} as const;

/** The patterns of the rules, shared with the JSON Schema (tools/build/schema.ts). */
export const HEADER_PATTERNS = {
  /** RFC 5322 field name: printable ASCII (33-126) but the colon. */
  name: /^[!-9;-~]+$/,
  /** Printable ASCII and space (no tab, CR, LF or anything beyond ASCII). */
  value: /^[ -~]*$/,
  /**
   * Names SES or the pipeline set (From, To, Subject, the MIME structure, the signatures and
   * trace fields, SES's own X-SES-*), case-insensitive. `Content-*` and `X-SES-*` are prefixes.
   */
  reserved:
    /^(?:from|sender|to|cc|bcc|subject|reply-to|date|message-id|mime-version|content-.*|return-path|received|dkim-signature|domainkey-signature|arc-.*|authentication-results|feedback-id|x-ses-.*)$/i,
} as const;

/** A refused header name: its pattern (case-insensitive, written in lower case) and why. */
export interface RefusedHeader {
  readonly pattern: RegExp;
  readonly reason: string;
}

/**
 * Names the pipeline refuses although SES would take them, because they would let a message send
 * replies, receipts or bounces to an address of its choosing, or claim a history it does not have.
 * Each pattern has the `i` flag and only lower-case letters (the schema spells out both cases).
 */
export const REFUSED_HEADERS: readonly RefusedHeader[] = [
  {
    pattern: /^(?:disposition-notification-to|return-receipt-to)$/i,
    reason: "is refused: it asks the recipient's mail client for a read receipt to an address the message chooses",
  },
  {
    pattern: /^errors-to$/i,
    reason: 'is refused: it asks servers to send bounces to an address the message chooses, not to SES and the ledger',
  },
  {
    pattern: /^received-spf$/i,
    reason: 'is refused: a trace field that receiving servers write (RFC 7208), never the sender',
  },
  {
    pattern: /^resent-/i,
    reason: 'is refused: Resent- fields (RFC 5322 3.6.6) claim a resending by someone other than the pipeline',
  },
];

/** Checks `headers` (undefined when the message has none); returns the headers without those at fault. */
export function readHeaders(add: AddIssue, value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    add(
      'headers',
      `must be an object of name -> value, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`,
    );
    return undefined;
  }
  const { maxHeaders, maxNameLength, maxValueLength } = HEADER_LIMITS;
  const entries = Object.entries(value);
  if (entries.length > maxHeaders) add('headers', `must have at most ${maxHeaders} entries`);
  const seen = new Set<string>();
  const out: [string, string][] = [];
  for (const [name, headerValue] of entries) {
    const field = `headers.${name}`;
    const problem = nameIssue(name, maxNameLength, seen) ?? valueIssue(headerValue, maxValueLength);
    seen.add(name.toLowerCase());
    if (problem) add(field, problem);
    else out.push([name, headerValue as string]);
  }
  // fromEntries defines own properties, so a header named "__proto__" stays a header.
  return Object.fromEntries(out);
}

function nameIssue(name: string, max: number, seen: ReadonlySet<string>): string | undefined {
  if (name === '' || name.length > max || !HEADER_PATTERNS.name.test(name)) {
    return `name must be 1 to ${max} printable ASCII characters without spaces or a colon (RFC 5322)`;
  }
  if (HEADER_PATTERNS.reserved.test(name)) return 'is set by SES or the pipeline: it cannot be given';
  const refused = REFUSED_HEADERS.find((rule) => rule.pattern.test(name));
  if (refused) return refused.reason;
  if (seen.has(name.toLowerCase())) return 'is given twice (header names are case-insensitive)';
  return undefined;
}

function valueIssue(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return 'value must be a string';
  if (/[\r\n]/.test(value)) return 'must not contain CR or LF (header injection)';
  if (!HEADER_PATTERNS.value.test(value)) return 'value must be printable ASCII (encode anything else, RFC 2047)';
  if (value.trim() === '') return 'value must not be empty';
  if (value.length > max) return `value must be at most ${max} characters`;
  return undefined;
}
