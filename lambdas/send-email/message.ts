/**
 * Pure validation of the message contract (v1.1); the SNS envelope and the
 * dedupe key around it are envelope.ts's. No I/O, no clients.
 */
import { ADDRESS_LIMITS, BIDI_OR_INVISIBLE, maskAddress, parseAddress } from './address';
import { PermanentError } from './errors';

export { maskAddress };

/** The SNS message attribute (or SQS message attribute) that carries the publisher's key. */
export const IDEMPOTENCY_KEY_ATTRIBUTE = 'idempotency-key';

export const LIMITS = {
  /** SES accepts at most 50 recipients per message (to + cc + bcc). */
  maxRecipients: 50,
  maxReplyTo: 10,
  /** RFC 5321 caps a path at 254 characters in practice. */
  maxAddressLength: ADDRESS_LIMITS.maxAddressLength,
  maxSubjectLength: 998,
  /** Text + HTML + template data, in UTF-8 bytes. SNS and SQS cap a message at 256 KiB. */
  maxContentBytes: 200 * 1024,
  maxTags: 10,
  maxTagLength: 256,
  maxKeyLength: 256,
  maxTemplateNameLength: 64,
} as const;

/**
 * One email, validated and normalised (lists are always arrays). Addresses are
 * in the form SES takes: ASCII, punycode domains, display names quoted or
 * RFC 2047-encoded.
 */
export interface EmailMessage {
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: readonly string[];
  readonly subject?: string;
  readonly text?: string;
  readonly html?: string;
  readonly template?: { readonly name: string; readonly data: Readonly<Record<string, unknown>> };
  readonly tags: Readonly<Record<string, string>>;
}

export interface ValidationIssue {
  readonly field: string;
  readonly reason: string;
}

/** A message that breaks the contract; lists every field at fault. */
export class InvalidMessageError extends PermanentError {
  /** What is known of the record despite the error (for the DLQ attributes). */
  dedupeKey?: string;
  snsMessageId?: string;
  constructor(
    code: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(code, issues.map((i) => `${i.field}: ${i.reason}`).join('; '));
  }
}

/** Throws an InvalidMessageError for one field (envelope.ts's checks throw it too). */
export function fail(code: string, field: string, reason: string): never {
  throw new InvalidMessageError(code, [{ field, reason }]);
}

type Json = Record<string, unknown>;

/** True for a JSON object (neither null nor an array). */
export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value's kind, for a reason: `null`, `an array`, `a number`, ... */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// ---------------------------------------------------------------- the contract

const KNOWN_FIELDS = new Set(['to', 'cc', 'bcc', 'replyTo', 'subject', 'text', 'html', 'template', 'tags']);

const TAG = /^[A-Za-z0-9_-]+$/;
const TEMPLATE_NAME = /^[A-Za-z0-9_-]+$/;
// Control characters other than tab, CR and LF (allowed in bodies only).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_IN_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

class Collector {
  readonly issues: ValidationIssue[] = [];
  add(field: string, reason: string): void {
    this.issues.push({ field, reason });
  }
}

function addressList(c: Collector, field: string, value: unknown, required: boolean): string[] {
  if (value === undefined) {
    if (required) c.add(field, 'is required');
    return [];
  }
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) {
    c.add(field, `must be an email address or a list of them, got ${describe(value)}`);
    return [];
  }
  if (required && list.length === 0) c.add(field, 'must name at least one recipient');
  const out: string[] = [];
  list.forEach((item: unknown, i) => {
    const path = typeof value === 'string' ? field : `${field}[${i}]`;
    if (typeof item !== 'string') {
      c.add(path, `must be a string, got ${describe(item)}`);
      return;
    }
    const parsed = parseAddress(item);
    if (parsed.ok) out.push(parsed.value.formatted);
    else c.add(path, parsed.reason);
  });
  return out;
}

function optionalString(c: Collector, field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    c.add(field, `must be a string, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

function checkBody(c: Collector, field: string, value: string): void {
  if (value.trim() === '') c.add(field, 'must not be empty');
  if (!value.isWellFormed()) c.add(field, 'contains invalid Unicode (a lone surrogate)');
  if (CONTROL_IN_BODY.test(value)) c.add(field, 'contains control characters');
}

function checkSubject(c: Collector, subject: string): void {
  if (subject.trim() === '') c.add('subject', 'must not be empty');
  if (/[\r\n]/.test(subject)) c.add('subject', 'must not contain CR or LF (header injection)');
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  else if (/[\u0000-\u001f\u007f]/.test(subject)) c.add('subject', 'must not contain control characters');
  if (BIDI_OR_INVISIBLE.test(subject)) c.add('subject', 'must not contain invisible or text-direction characters');
  if (!subject.isWellFormed()) c.add('subject', 'contains invalid Unicode (a lone surrogate)');
  if (subject.length > LIMITS.maxSubjectLength)
    c.add('subject', `must be at most ${LIMITS.maxSubjectLength} characters`);
}

function readTemplate(c: Collector, value: unknown): EmailMessage['template'] | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    c.add('template', `must be an object { name, data }, got ${describe(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key !== 'name' && key !== 'data') c.add(`template.${key}`, 'is not a known field (allowed: name, data)');
  }
  const { name, data } = value;
  if (typeof name !== 'string' || name === '') {
    c.add('template.name', 'is required: the name of a stored SES template');
  } else if (name.length > LIMITS.maxTemplateNameLength || !TEMPLATE_NAME.test(name)) {
    c.add('template.name', `must be 1 to ${LIMITS.maxTemplateNameLength} letters, digits, _ or -`);
  }
  if (data !== undefined && !isObject(data)) c.add('template.data', `must be an object, got ${describe(data)}`);
  return typeof name === 'string' ? { name, data: isObject(data) ? data : {} } : undefined;
}

function readTags(c: Collector, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) {
    c.add('tags', `must be an object of name -> value, got ${describe(value)}`);
    return {};
  }
  const entries = Object.entries(value);
  if (entries.length > LIMITS.maxTags) c.add('tags', `must have at most ${LIMITS.maxTags} entries`);
  const out: [string, string][] = [];
  for (const [name, tagValue] of entries) {
    const field = `tags.${name}`;
    if (!TAG.test(name) || name.length > LIMITS.maxTagLength) {
      c.add(field, `name must be 1 to ${LIMITS.maxTagLength} letters, digits, _ or -`);
    } else if (name.toLowerCase().startsWith('dedupe')) {
      c.add(field, 'names starting with "dedupe" are reserved for the pipeline');
    } else if (typeof tagValue !== 'string' || !TAG.test(tagValue) || tagValue.length > LIMITS.maxTagLength) {
      c.add(field, `value must be a string of 1 to ${LIMITS.maxTagLength} letters, digits, _ or -`);
    } else {
      out.push([name, tagValue]);
    }
  }
  // fromEntries defines own properties, so a tag named "__proto__" stays a tag.
  return Object.fromEntries(out);
}

function utf8Bytes(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value, 'utf8');
}

/**
 * Validates the message contract v1.1 and returns the normalised email.
 * Throws {@link InvalidMessageError} listing every field at fault.
 */
export function validateEmail(message: unknown): EmailMessage {
  if (!isObject(message)) {
    fail('InvalidMessage', 'message', `must be a JSON object, got ${describe(message)}`);
  }
  const c = new Collector();
  for (const key of Object.keys(message)) {
    if (!KNOWN_FIELDS.has(key)) c.add(key, `is not a known field (allowed: ${[...KNOWN_FIELDS].join(', ')})`);
  }
  const to = addressList(c, 'to', message.to, true);
  const cc = addressList(c, 'cc', message.cc, false);
  const bcc = addressList(c, 'bcc', message.bcc, false);
  const replyTo = addressList(c, 'replyTo', message.replyTo, false);
  const recipients = to.length + cc.length + bcc.length;
  if (recipients > LIMITS.maxRecipients) {
    c.add('to', `to, cc and bcc together must have at most ${LIMITS.maxRecipients} recipients, got ${recipients}`);
  }
  if (replyTo.length > LIMITS.maxReplyTo) c.add('replyTo', `must have at most ${LIMITS.maxReplyTo} addresses`);

  const subject = optionalString(c, 'subject', message.subject);
  const text = optionalString(c, 'text', message.text);
  const html = optionalString(c, 'html', message.html);
  const template = readTemplate(c, message.template);
  const tags = readTags(c, message.tags);

  const hasSimple = text !== undefined || html !== undefined;
  if (message.template !== undefined && (message.text !== undefined || message.html !== undefined)) {
    c.add('template', 'cannot be combined with text or html: send either simple content or a template');
  } else if (message.template === undefined && message.text === undefined && message.html === undefined) {
    c.add('text', 'content is required: give text and/or html, or a template');
  }
  if (message.template !== undefined && message.subject !== undefined) {
    c.add('subject', 'must not be set with a template: the template defines the subject');
  }
  if (hasSimple && message.subject === undefined) c.add('subject', 'is required');
  if (subject !== undefined) checkSubject(c, subject);
  if (text !== undefined) checkBody(c, 'text', text);
  if (html !== undefined) checkBody(c, 'html', html);

  const contentBytes =
    utf8Bytes(text) + utf8Bytes(html) + (template ? utf8Bytes(JSON.stringify(template.data)) : 0) + utf8Bytes(subject);
  if (contentBytes > LIMITS.maxContentBytes) {
    c.add(
      text !== undefined || html !== undefined ? 'text' : 'template.data',
      `content is ${contentBytes} bytes, over the limit of ${LIMITS.maxContentBytes}`,
    );
  }

  if (c.issues.length > 0) throw new InvalidMessageError('InvalidMessage', c.issues);
  return {
    to,
    cc,
    bcc,
    replyTo,
    ...(subject !== undefined ? { subject } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    ...(template !== undefined ? { template } : {}),
    tags,
  };
}
