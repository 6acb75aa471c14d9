/**
 * Validation of the message contract (declaration.ts): a body, and an idempotency key, checked
 * field by field, every issue naming its field. The SNS envelope around them is the send
 * function's (send-email). No I/O, no clients.
 */
import { maskAddress, parseAddress } from './address';
import { PermanentError } from '../errors';
import { valueTooDeep, type TooDeep } from './json-depth';
import { canonicalNumber } from './sns-number';
import { readAttachments } from './attachments';
import { readHeaders } from './headers';
import { readSendAt } from './send-at';
import {
  CONTRACT,
  KEY_FIELD,
  type ContractField,
  type ContractFieldName,
  type EmailMessage,
  type KeyType,
  type TextRules,
} from './declaration';

export { maskAddress };

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
 * Validates the message contract v1.2 and returns the normalised email.
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
  const add = (field: string, reason: string) => c.add(field, reason);
  const attachments = readAttachments(add, message.attachments);
  const headers = readHeaders(add, message.headers);
  const sendAt = readSendAtField(c, message.sendAt);
  const from = optionalString(c, 'from', message.from);
  if (from !== undefined) checkText(c, 'from', from, CONTRACT.fields.from.rules);

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
  } else if (dataBytes !== undefined && contentBytes + (attachments?.inlineChars ?? 0) > CONTRACT.maxContentBytes) {
    // Inline files travel in the SNS message (256 KiB) with the content: the same limit holds both.
    c.add(
      'attachments',
      `content and inline attachments (base64) are ${contentBytes + (attachments?.inlineChars ?? 0)} bytes together, ` +
        `over the limit of ${CONTRACT.maxContentBytes}: send larger files by s3Key`,
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
    ...(attachments !== undefined ? { attachments: attachments.attachments } : {}),
    ...(headers !== undefined ? { headers } : {}),
    ...(sendAt !== undefined ? { sendAt } : {}),
    ...(from !== undefined ? { from } : {}),
  };
}

/** v1.2 `sendAt`: its format and calendar (send-at.ts); how far ahead is the pipeline's to check. */
function readSendAtField(c: Collector, value: unknown): string | undefined {
  const sendAt = optionalString(c, 'sendAt', value);
  if (sendAt === undefined) return undefined;
  const read = readSendAt(sendAt);
  if (!read.ok) c.add('sendAt', read.reason);
  return read.ok ? sendAt : undefined;
}
