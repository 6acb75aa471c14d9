/**
 * The message contract (v1.3), declared once: its fields and their rules, its limits, the key
 * attribute and the types a publisher writes. validate.ts enforces it; the JSON Schema for
 * publishers in other languages (schema/email-message.schema.json, `npm run schema`) and the
 * README's table are generated from it. Data and types only.
 */
import { ADDRESS_LIMITS, BIDI_OR_INVISIBLE } from './address';
import { SNS_NUMBER } from './sns-number';
import { ATTACHMENT_LIMITS, type Attachment, type AttachmentInput } from './attachments';
import { HEADER_LIMITS } from './headers';

export type { Attachment, AttachmentInput } from './attachments';
import { SEND_AT_FORMAT_REASON, SEND_AT_PATTERN } from './send-at';

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
  /** v1.2: present only when the message has attachments, so a v1.1 message hashes as before. */
  readonly attachments?: readonly Attachment[];
  /** v1.2: custom header fields, present only when the message has them. */
  readonly headers?: Readonly<Record<string, string>>;
  /** v1.2: not sent before this instant (RFC 3339, as written; see send-at.ts). */
  readonly sendAt?: string;
  /**
   * v1.3: the From address, as the pipeline checked it against the sender's addresses (the team's
   * senders, or the pipeline's senderAddress); present only when given (or a team's default).
   */
  readonly from?: string;
}

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
  | { readonly kind: 'tags'; readonly description: string }
  | { readonly kind: 'attachments'; readonly description: string }
  | { readonly kind: 'headers'; readonly description: string };

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
// Control characters other than tab, CR and LF (allowed in bodies only).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_IN_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const CONTROL_RULE: PatternRule = { pattern: CONTROL, reason: 'must not contain control characters' };
const NAME_CHARACTERS = /^[A-Za-z0-9_-]+$/;

/**
 * The message contract v1.3, declared once: {@link validateEmail} and {@link checkIdempotencyKey}
 * enforce it, and the JSON Schema for publishers in other languages
 * (schema/email-message.schema.json, `npm run schema`) is generated from it.
 */
export const CONTRACT = {
  version: '1.3',
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
    // v1.2: attachments.ts and headers.ts declare and check these two.
    attachments: {
      kind: 'attachments',
      description: `Files: inline base64 content, or an s3Key in the attachments bucket; at most ${ATTACHMENT_LIMITS.maxAttachments}.`,
    },
    headers: {
      kind: 'headers',
      description: `Custom header fields, name -> value, at most ${HEADER_LIMITS.maxHeaders}.`,
    },
    // v1.2 scheduling (send-at.ts): its own block, so other v1.2 fields merge beside it.
    sendAt: {
      kind: 'text',
      description:
        "v1.2: not sent before this instant, sent once after it; an RFC 3339 date-time with an offset. At most the pipeline's maxScheduleAheadSeconds (default 24 h) after publishing; a past time sends at once.",
      rules: { matches: { pattern: SEND_AT_PATTERN, reason: SEND_AT_FORMAT_REASON } },
    },
    // v1.3: checked here for its form; the send function checks it is one of the sender's addresses.
    from: {
      kind: 'text',
      description:
        "v1.3: the From address, bare (noreply@example.com): one of the publishing team's senders (its default, the first, when left out); without teams, the pipeline's senderAddress. Anything else is dead-lettered at once, naming from.",
      rules: {
        minLength: 3,
        maxLength: LIMITS.maxAddressLength,
        matches: {
          pattern: /^[^\s@<>]+@[^\s@<>]+$/,
          reason: 'must be a bare email address such as noreply@example.com',
        },
      },
    },
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
  /** v1.2: files, inline (base64) or by key in the attachments bucket. */
  readonly attachments?: readonly AttachmentInput[];
  /** v1.2: custom header fields, name -> value (e.g. List-Unsubscribe). */
  readonly headers?: Readonly<Record<string, string>>;
  /** v1.2: not sent before this instant, an RFC 3339 date-time with an offset (`2026-12-24T08:00:00Z`). */
  readonly sendAt?: string;
  /** v1.3: the From address: one of the publishing team's senders (without teams, the pipeline's senderAddress). */
  readonly from?: string;
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

/** A message as a publisher writes it: the JSON body of the SNS message (contract v1.3). */
export type EmailMessageInput = Recipients & (SimpleContent | TemplateContent);

/** The SNS message attribute data types a key may have. */
export type KeyType = (typeof CONTRACT.idempotencyKey.types)[number];

/** The field an idempotency key's issues name. */
export const KEY_FIELD = `attribute ${IDEMPOTENCY_KEY_ATTRIBUTE}`;
