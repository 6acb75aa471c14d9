/**
 * Pure validation of the message contract (v1.1); the SNS envelope and the
 * dedupe key around it are envelope.ts's. No I/O, no clients.
 */
import { ADDRESS_LIMITS, BIDI_OR_INVISIBLE, maskAddress, parseAddress } from './address';
import { PermanentError } from './errors';
import { valueTooDeep, type TooDeep } from './json-depth';
import { canonicalNumber, SNS_NUMBER } from './sns-number';

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
  /**
   * Levels of objects and arrays in a message body, the body's own object counting as one (so
   * `template.data` holds 29 more). Checked before anything walks the body: JSON.stringify and
   * Powertools' payload hash recurse once per level, and a few thousand levels overflow their stack.
   */
  maxDepth: 32,
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

/** A rule on a string: a pattern, and what is wrong when it matches (forbids) or does not (matches). */
export interface PatternRule {
  readonly pattern: RegExp;
  readonly reason: string;
}

/** What a string field must be. JSON Schema lengths count code points, these UTF-16 units (as JavaScript). */
export interface TextRules {
  /** At least this many characters. @default no minimum */
  readonly minLength?: number;
  /** At most this many characters. @default no maximum */
  readonly maxLength?: number;
  /** Must hold a character other than white space. @default false */
  readonly nonBlank?: boolean;
  /** The whole value must match. @default anything */
  readonly matches?: PatternRule;
  /** Must contain no match of any of these. @default none */
  readonly forbids?: readonly PatternRule[];
  /** What a lone surrogate (not expressible in JSON Schema) is reported as. @default "contains invalid Unicode" */
  readonly illFormed?: string;
}

/**
 * One field of the message body. An address list's maxItems for to, cc and bcc is implied by the
 * limit on them together (`recipients`), which a JSON Schema cannot state.
 */
export type ContractField =
  | { readonly kind: 'addresses'; readonly description: string; readonly minItems?: number; readonly maxItems: number }
  | { readonly kind: 'text'; readonly description: string; readonly rules: TextRules }
  | { readonly kind: 'template'; readonly description: string }
  | { readonly kind: 'tags'; readonly description: string };

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
// Control characters other than tab, CR and LF (allowed in bodies only).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_IN_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const CONTROL_RULE: PatternRule = { pattern: CONTROL, reason: 'must not contain control characters' };
const NAME_CHARACTERS = /^[A-Za-z0-9_-]+$/;

/**
 * The message contract v1.1, declared once: {@link validateEmail} and {@link checkIdempotencyKey}
 * enforce it, and the JSON Schema for publishers in other languages
 * (schema/email-message.schema.json, `npm run schema`) is generated from it.
 */
export const CONTRACT = {
  version: '1.1',
  /** The fields of the message body, the only ones allowed; `to` is the one always required. */
  fields: {
    to: {
      kind: 'addresses',
      description: 'Recipients: an address or a list of them, at least one.',
      minItems: 1,
      maxItems: LIMITS.maxRecipients,
    },
    cc: { kind: 'addresses', description: 'Copy recipients.', maxItems: LIMITS.maxRecipients },
    bcc: { kind: 'addresses', description: 'Blind-copy recipients.', maxItems: LIMITS.maxRecipients },
    replyTo: { kind: 'addresses', description: 'Reply-To addresses.', maxItems: LIMITS.maxReplyTo },
    subject: {
      kind: 'text',
      description: 'Required with text/html, not allowed with a template.',
      rules: {
        nonBlank: true,
        maxLength: LIMITS.maxSubjectLength,
        forbids: [
          { pattern: /[\r\n]/, reason: 'must not contain CR or LF (header injection)' },
          // Control characters but CR and LF (reported above).
          // eslint-disable-next-line no-control-regex -- finding control characters is the point
          { pattern: /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/, reason: CONTROL_RULE.reason },
          { pattern: BIDI_OR_INVISIBLE, reason: 'must not contain invisible or text-direction characters' },
        ],
      },
    },
    text: {
      kind: 'text',
      description: 'The plain-text body (with html, or alone).',
      rules: { nonBlank: true, forbids: [{ pattern: CONTROL_IN_BODY, reason: 'contains control characters' }] },
    },
    html: {
      kind: 'text',
      description: 'The HTML body (with text, or alone).',
      rules: { nonBlank: true, forbids: [{ pattern: CONTROL_IN_BODY, reason: 'contains control characters' }] },
    },
    template: { kind: 'template', description: 'A stored SES template and its data, instead of subject/text/html.' },
    tags: { kind: 'tags', description: 'SES message tags, name -> value.' },
  } satisfies Record<string, ContractField>,
  /** to, cc and bcc together. */
  recipients: { fields: ['to', 'cc', 'bcc'], max: LIMITS.maxRecipients },
  /** Text + HTML + template data + subject, in UTF-8 bytes. */
  maxContentBytes: LIMITS.maxContentBytes,
  /** Levels of objects and arrays, the body counting as one; checked on the JSON text before it is parsed. */
  maxDepth: LIMITS.maxDepth,
  template: {
    fields: ['name', 'data'],
    name: {
      maxLength: LIMITS.maxTemplateNameLength,
      matches: {
        pattern: NAME_CHARACTERS,
        reason: `must be 1 to ${LIMITS.maxTemplateNameLength} letters, digits, _ or -`,
      },
    } satisfies TextRules,
  },
  tags: {
    maxEntries: LIMITS.maxTags,
    name: {
      maxLength: LIMITS.maxTagLength,
      matches: { pattern: NAME_CHARACTERS, reason: `name must be 1 to ${LIMITS.maxTagLength} letters, digits, _ or -` },
    } satisfies TextRules,
    /** Tag names the pipeline keeps for itself (case-insensitive). */
    reserved: {
      pattern: /^[Dd][Ee][Dd][Uu][Pp][Ee]/,
      reason: 'names starting with "dedupe" are reserved for the pipeline',
    },
    value: {
      maxLength: LIMITS.maxTagLength,
      matches: {
        pattern: NAME_CHARACTERS,
        reason: `value must be a string of 1 to ${LIMITS.maxTagLength} letters, digits, _ or -`,
      },
    } satisfies TextRules,
  },
  /**
   * The optional SNS message attribute (String or Number) that makes the dedupe key: a String in
   * Unicode NFC, a Number by its value (1e3, 1000 and 1000.0 are the key 1000), then these rules.
   */
  idempotencyKey: {
    attribute: IDEMPOTENCY_KEY_ATTRIBUTE,
    types: ['String', 'Number'],
    number: SNS_NUMBER,
    rules: {
      maxLength: LIMITS.maxKeyLength,
      forbids: [{ pattern: /^$|^\s|\s$/, reason: 'must not be empty or start or end with spaces' }, CONTROL_RULE],
      illFormed: CONTROL_RULE.reason,
    } satisfies TextRules,
  },
} as const;

/** A field name of the message body. */
export type ContractFieldName = keyof typeof CONTRACT.fields;

/** An address as people write it, or a list of them. */
export type Addresses = string | readonly string[];

interface Recipients {
  readonly to: Addresses;
  readonly cc?: Addresses;
  readonly bcc?: Addresses;
  readonly replyTo?: Addresses;
  /** SES message tags, name -> value (letters, digits, `_`, `-`). */
  readonly tags?: Readonly<Record<string, string>>;
}

/** Simple content: a subject with text, HTML or both. */
type SimpleContent = { readonly subject: string; readonly template?: never } & (
  { readonly text: string; readonly html?: string } | { readonly text?: string; readonly html: string }
);

/** A stored SES template (it defines the subject). */
interface TemplateContent {
  readonly template: { readonly name: string; readonly data?: Readonly<Record<string, unknown>> };
  readonly subject?: never;
  readonly text?: never;
  readonly html?: never;
}

/** A message as a publisher writes it: the JSON body of the SNS message (contract v1.1). */
export type EmailMessageInput = Recipients & (SimpleContent | TemplateContent);

const KNOWN_FIELDS = Object.keys(CONTRACT.fields) as ContractFieldName[];

class Collector {
  readonly issues: ValidationIssue[] = [];
  add(field: string, reason: string): void {
    this.issues.push({ field, reason });
  }
}

/** Checks a string against its declared rules, each problem reported on `field`. */
function checkText(c: Collector, field: string, value: string, rules: TextRules): void {
  if (rules.minLength !== undefined && value.length < rules.minLength) {
    c.add(field, rules.minLength === 1 ? 'must not be empty' : `must be at least ${rules.minLength} characters`);
  } else if (rules.nonBlank && value.trim() === '') c.add(field, 'must not be empty');
  for (const rule of rules.forbids ?? []) if (rule.pattern.test(value)) c.add(field, rule.reason);
  if (!value.isWellFormed()) c.add(field, rules.illFormed ?? 'contains invalid Unicode (a lone surrogate)');
  if (rules.matches && !rules.matches.pattern.test(value)) c.add(field, rules.matches.reason);
  else if (rules.maxLength !== undefined && value.length > rules.maxLength) {
    c.add(field, rules.matches?.reason ?? `must be at most ${rules.maxLength} characters`);
  }
}

/** The SNS message attribute data types a key may have. */
export type KeyType = (typeof CONTRACT.idempotencyKey.types)[number];

/** The field an idempotency key's issues name. */
export const KEY_FIELD = `attribute ${IDEMPOTENCY_KEY_ATTRIBUTE}`;

/** A key as received, and the dedupe key it makes (or why it makes none). */
interface ReadKey {
  readonly key: string;
  readonly issues: readonly ValidationIssue[];
}

function readKey(value: string, type: KeyType, field: string): ReadKey {
  let key: string;
  if (type === 'Number') {
    const number = canonicalNumber(value);
    if (!number.ok) return { key: value, issues: [{ field, reason: number.reason }] };
    key = number.value;
  } else {
    // One key however its characters are composed (é as one code point or as e + a combining accent).
    key = value.normalize('NFC');
  }
  const c = new Collector();
  checkText(c, field, key, CONTRACT.idempotencyKey.rules);
  return { key, issues: c.issues };
}

/**
 * The dedupe key an idempotency key makes: a String in Unicode NFC, a Number by its value in plain
 * decimal notation (`1e3`, `1000.0` -> `1000`). The rules are checked after that; see {@link checkIdempotencyKey}.
 */
export function normalizeIdempotencyKey(value: string, type: KeyType = 'String'): string {
  return readKey(value, type, KEY_FIELD).key;
}

/** What is wrong with an idempotency key (the first issue first), or nothing when the pipeline takes it. */
export function idempotencyKeyIssues(
  key: string,
  type: KeyType = 'String',
  field: string = KEY_FIELD,
): readonly ValidationIssue[] {
  return readKey(key, type, field).issues;
}

/**
 * Checks an idempotency key (the `idempotency-key` message attribute, of SNS data type `type`) as the
 * pipeline does, and returns the dedupe key it makes ({@link normalizeIdempotencyKey}). Throws
 * {@link InvalidMessageError} (code InvalidKey) naming `field` (the attribute) and the reason.
 */
export function checkIdempotencyKey(key: string, type: KeyType = 'String', field: string = KEY_FIELD): string {
  const read = readKey(key, type, field);
  const [first] = read.issues;
  if (first) throw new InvalidMessageError('InvalidKey', [first]);
  return read.key;
}

// ---------------------------------------------------------------- depth

/** The contract field a body nested too deep is reported on: the field that holds the deepest part. */
function depthField(found: TooDeep): string {
  const [top, inner] = found.path;
  if (top === 'template' && inner === 'data') return 'template.data';
  return top !== undefined && (KNOWN_FIELDS as readonly string[]).includes(top) ? top : 'message';
}

/**
 * The issue of a message body nested deeper than {@link CONTRACT.maxDepth} (found by textTooDeep on
 * its JSON text or valueTooDeep on its value, json-depth.ts), on the field that holds the deepest part.
 */
export function tooDeepIssue(found: TooDeep): ValidationIssue {
  return {
    field: depthField(found),
    reason: `is nested too deep: at most ${CONTRACT.maxDepth} levels of objects and arrays, the message counting as one`,
  };
}

function addressList(c: Collector, field: ContractFieldName, value: unknown): string[] {
  const declared: ContractField = CONTRACT.fields[field];
  const required = declared.kind === 'addresses' && (declared.minItems ?? 0) > 0;
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

function readTemplate(c: Collector, value: unknown): EmailMessage['template'] | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    c.add('template', `must be an object { name, data }, got ${describe(value)}`);
    return undefined;
  }
  const allowed: readonly string[] = CONTRACT.template.fields;
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) c.add(`template.${key}`, `is not a known field (allowed: ${allowed.join(', ')})`);
  }
  const { name, data } = value;
  if (typeof name !== 'string' || name === '') {
    c.add('template.name', 'is required: the name of a stored SES template');
  } else {
    checkText(c, 'template.name', name, CONTRACT.template.name);
  }
  if (data !== undefined && !isObject(data)) c.add('template.data', `must be an object, got ${describe(data)}`);
  return typeof name === 'string' ? { name, data: isObject(data) ? data : {} } : undefined;
}

/** Only the first problem of a tag is reported. */
function firstIssue(field: string, value: string, rules: TextRules): ValidationIssue | undefined {
  const c = new Collector();
  checkText(c, field, value, rules);
  return c.issues[0];
}

function readTags(c: Collector, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) {
    c.add('tags', `must be an object of name -> value, got ${describe(value)}`);
    return {};
  }
  const { maxEntries, name: nameRules, reserved, value: valueRules } = CONTRACT.tags;
  const entries = Object.entries(value);
  if (entries.length > maxEntries) c.add('tags', `must have at most ${maxEntries} entries`);
  const out: [string, string][] = [];
  for (const [name, tagValue] of entries) {
    const field = `tags.${name}`;
    const problem =
      firstIssue(field, name, nameRules) ??
      (reserved.pattern.test(name) ? { field, reason: reserved.reason } : undefined) ??
      (typeof tagValue === 'string'
        ? firstIssue(field, tagValue, valueRules)
        : { field, reason: valueRules.matches.reason });
    if (problem) c.add(problem.field, problem.reason);
    else out.push([name, tagValue as string]);
  }
  // fromEntries defines own properties, so a tag named "__proto__" stays a tag.
  return Object.fromEntries(out);
}

function utf8Bytes(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value, 'utf8');
}

/** The template data's size as JSON, or undefined (with the issue) when it cannot be serialized. */
function templateDataBytes(c: Collector, data: Readonly<Record<string, unknown>>): number | undefined {
  try {
    return utf8Bytes(JSON.stringify(data));
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    c.add('template.data', `cannot be serialized as JSON (${name})`);
    return undefined;
  }
}

/**
 * Validates the message contract v1.1 and returns the normalised email.
 * Throws {@link InvalidMessageError} listing every field at fault.
 */
export function validateEmail(message: unknown): EmailMessage {
  // Before anything walks it (measuring the template data below is JSON.stringify, which recurses).
  const deep = valueTooDeep(message, CONTRACT.maxDepth);
  if (deep) throw new InvalidMessageError('InvalidMessage', [tooDeepIssue(deep)]);
  if (!isObject(message)) {
    fail('InvalidMessage', 'message', `must be a JSON object, got ${describe(message)}`);
  }
  const c = new Collector();
  for (const key of Object.keys(message)) {
    if (!(KNOWN_FIELDS as string[]).includes(key)) {
      c.add(key, `is not a known field (allowed: ${KNOWN_FIELDS.join(', ')})`);
    }
  }
  const to = addressList(c, 'to', message.to);
  const cc = addressList(c, 'cc', message.cc);
  const bcc = addressList(c, 'bcc', message.bcc);
  const replyTo = addressList(c, 'replyTo', message.replyTo);
  const recipients = to.length + cc.length + bcc.length;
  if (recipients > CONTRACT.recipients.max) {
    c.add('to', `to, cc and bcc together must have at most ${CONTRACT.recipients.max} recipients, got ${recipients}`);
  }
  const maxReplyTo = CONTRACT.fields.replyTo.maxItems;
  if (replyTo.length > maxReplyTo) c.add('replyTo', `must have at most ${maxReplyTo} addresses`);

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
  for (const [field, value] of [
    ['subject', subject],
    ['text', text],
    ['html', html],
  ] as const) {
    if (value !== undefined) checkText(c, field, value, CONTRACT.fields[field].rules);
  }

  const dataBytes = template ? templateDataBytes(c, template.data) : 0;
  const contentBytes = utf8Bytes(text) + utf8Bytes(html) + (dataBytes ?? 0) + utf8Bytes(subject);
  if (dataBytes !== undefined && contentBytes > CONTRACT.maxContentBytes) {
    c.add(
      text !== undefined || html !== undefined ? 'text' : 'template.data',
      `content is ${contentBytes} bytes, over the limit of ${CONTRACT.maxContentBytes}`,
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
