/**
 * `npm run schema`: writes the message contract as a JSON Schema (draft-07) for publishers in
 * other languages, generated from the contract's declaration (CONTRACT in
 * lambdas/kernel/contract/declaration.ts), the one validateEmail enforces. `npm run build` writes it too;
 * a unit test fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  ATTACHMENT_LIMITS,
  ATTACHMENT_PATTERNS,
  DISPOSITIONS,
  HEADER_LIMITS,
  HEADER_PATTERNS,
  REFUSED_HEADERS,
  S3_KEY_RULES,
  SES_BLOCKED_EXTENSIONS,
  CONTRACT,
  type ContractField,
  type ContractFieldName,
  type PatternRule,
  type TextRules,
} from '../../lambdas/kernel/contract';

export const SCHEMA_FILE = path.join(__dirname, '..', '..', 'schema', 'email-message.schema.json');

/** A JSON Schema object (draft-07). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The pattern of a rule as JSON Schema has it: an ECMA-262 regular expression without flags. */
function source(rule: PatternRule): string {
  if (rule.pattern.flags !== '') throw new Error(`${String(rule.pattern)}: JSON Schema patterns take no flags`);
  return rule.pattern.source;
}

/** A string with the declared rules. Lengths in JSON Schema count code points, the pipeline UTF-16 units. */
function text(rules: TextRules, description?: string): JsonSchema {
  const patterns: JsonSchema[] = [
    ...(rules.nonBlank ? [{ pattern: '\\S' }] : []),
    ...(rules.matches ? [{ pattern: source(rules.matches) }] : []),
    ...(rules.forbids ?? []).map((rule) => ({ not: { pattern: source(rule) } })),
  ];
  return {
    ...(description !== undefined ? { description } : {}),
    type: 'string',
    ...(rules.minLength !== undefined ? { minLength: rules.minLength } : {}),
    ...(rules.maxLength !== undefined ? { maxLength: rules.maxLength } : {}),
    ...(patterns.length === 1 ? patterns[0] : {}),
    ...(patterns.length > 1 ? { allOf: patterns } : {}),
  };
}

/**
 * The outline of an address as people write it. The pipeline parses addresses in full (local part,
 * domain, display name; see the README); every address it takes has this outline.
 */
const ADDRESS: JsonSchema = {
  description:
    'An address as people write it: ada@example.com, Ada Lovelace <ada@example.com>, "Lovelace, Ada" <ada@example.com>.',
  type: 'string',
  pattern: '\\S@\\S',
  not: { pattern: '[\\r\\n]' },
};

/** A pattern's source matched in any case (JSON Schema patterns take no `i` flag): each letter as [xX]. */
function caseless(pattern: string): string {
  return pattern.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);
}

/** One attachment: inline base64 content or an s3Key, never both. */
function attachment(): JsonSchema {
  const { maxFileNameLength, maxContentTypeLength, maxS3KeyBytes } = ATTACHMENT_LIMITS;
  const blocked = caseless(`\\.(?:${SES_BLOCKED_EXTENSIONS.join('|')})$`);
  return {
    type: 'object',
    additionalProperties: false,
    required: ['filename', 'contentType'],
    properties: {
      filename: {
        description: `The name the recipient sees: no path, no colon, no control characters, not ending in a dot or white space, not a file type SES blocks (${SES_BLOCKED_EXTENSIONS.map((e) => `.${e}`).join(' ')}; case-insensitive).`,
        type: 'string',
        minLength: 1,
        maxLength: maxFileNameLength,
        allOf: [
          { not: { pattern: source({ pattern: ATTACHMENT_PATTERNS.pathSeparator, reason: '' }) } },
          { not: { pattern: source({ pattern: ATTACHMENT_PATTERNS.colon, reason: '' }) } },
          { not: { pattern: source({ pattern: ATTACHMENT_PATTERNS.control, reason: '' }) } },
          { not: { pattern: source({ pattern: ATTACHMENT_PATTERNS.trailingDotOrSpace, reason: '' }) } },
          { not: { pattern: blocked } },
        ],
      },
      contentType: {
        description: 'The MIME type, e.g. application/pdf (no parameters).',
        type: 'string',
        maxLength: maxContentTypeLength,
        pattern: source({ pattern: ATTACHMENT_PATTERNS.contentType, reason: '' }),
      },
      content: {
        description: 'The file, base64 (RFC 4648, padded, one line).',
        type: 'string',
        pattern: source({ pattern: ATTACHMENT_PATTERNS.base64, reason: '' }),
      },
      s3Key: {
        description:
          `An object in the pipeline's attachments bucket (AttachmentsBucketName), 1 to ${maxS3KeyBytes} bytes: ` +
          'a clean relative key (segments between single slashes, none empty, . or ..; no leading slash, no backslash).',
        type: 'string',
        minLength: 1,
        allOf: S3_KEY_RULES.map((rule) => ({ not: { pattern: source(rule) } })),
      },
      disposition: { description: 'attachment (default) or inline.', enum: [...DISPOSITIONS] },
      contentId: {
        description: 'What the HTML body refers to as cid:<contentId>; required with inline.',
        type: 'string',
        pattern: source({ pattern: ATTACHMENT_PATTERNS.contentId, reason: '' }),
      },
    },
    oneOf: [{ required: ['content'] }, { required: ['s3Key'] }],
    if: { required: ['disposition'], properties: { disposition: { const: 'inline' } } },
    then: { required: ['contentId'] },
  };
}

/** Custom header fields, name -> value. */
function headers(description: string): JsonSchema {
  const { maxHeaders, maxNameLength, maxValueLength } = HEADER_LIMITS;
  return {
    description,
    type: 'object',
    maxProperties: maxHeaders,
    propertyNames: {
      type: 'string',
      maxLength: maxNameLength,
      pattern: source({ pattern: HEADER_PATTERNS.name, reason: '' }),
      allOf: [HEADER_PATTERNS.reserved, ...REFUSED_HEADERS.map((rule) => rule.pattern)].map((pattern) => ({
        not: { pattern: caseless(pattern.source) },
      })),
    },
    additionalProperties: {
      type: 'string',
      maxLength: maxValueLength,
      allOf: [{ pattern: source({ pattern: HEADER_PATTERNS.value, reason: '' }) }, { pattern: '\\S' }],
    },
  };
}

function field(declared: ContractField): JsonSchema {
  const { description } = declared;
  switch (declared.kind) {
    case 'addresses':
      return {
        description,
        oneOf: [
          { $ref: '#/definitions/address' },
          {
            type: 'array',
            items: { $ref: '#/definitions/address' },
            ...(declared.minItems !== undefined ? { minItems: declared.minItems } : {}),
            maxItems: declared.maxItems,
          },
        ],
      };
    case 'text':
      return text(declared.rules, description);
    case 'template': {
      const [name, data] = CONTRACT.template.fields;
      return {
        description,
        type: 'object',
        additionalProperties: false,
        required: [name],
        properties: {
          [name]: text(CONTRACT.template.name, 'The name of a stored SES template.'),
          [data]: { description: 'The template data.', type: 'object' },
        },
      };
    }
    case 'tags': {
      const { maxEntries, name, reserved, value } = CONTRACT.tags;
      return {
        description,
        type: 'object',
        maxProperties: maxEntries,
        propertyNames: { allOf: [text(name), { not: { pattern: source(reserved) } }] },
        additionalProperties: text(value),
      };
    }
    case 'attachments':
      return {
        description,
        type: 'array',
        maxItems: ATTACHMENT_LIMITS.maxAttachments,
        items: attachment(),
      };
    case 'headers':
      return headers(description);
  }
}

/** `required` of body fields (their names checked against the declaration). */
function present(...names: ContractFieldName[]): JsonSchema {
  return { required: names };
}

/** Simple content or a template, not both (JSON Schema cannot name the field at fault as the pipeline does). */
const CONTENT: readonly JsonSchema[] = [
  {
    description: 'Simple content: a subject with text, HTML or both.',
    ...present('subject'),
    anyOf: [present('text'), present('html')],
    not: present('template'),
  },
  {
    description: 'A stored SES template, which defines the subject.',
    ...present('template'),
    not: { anyOf: [present('subject'), present('text'), present('html')] },
  },
];

/** The JSON Schema of a message body, from the contract's declaration. */
export function emailMessageSchema(): JsonSchema {
  const fields = Object.entries(CONTRACT.fields) as [string, ContractField][];
  const { recipients, maxContentBytes, maxDepth, idempotencyKey } = CONTRACT;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `urn:exactly-once-email:email-message:${CONTRACT.version}`,
    title: `Email message (contract v${CONTRACT.version})`,
    description:
      'The JSON body of an SNS message to the email pipeline. Generated from the contract declaration ' +
      '(lambdas/kernel/contract/declaration.ts) by npm run schema: do not edit. The pipeline also checks what a ' +
      `schema cannot say: ${recipients.fields.join(' + ')} at most ${recipients.max} recipients together; ` +
      `subject + text + html + template data at most ${maxContentBytes} bytes of UTF-8; objects and arrays ` +
      `nested at most ${maxDepth} levels deep, the message counting as one; every address in full; ` +
      `inline attachments' base64 counted with the content; attachments at most ${ATTACHMENT_LIMITS.maxTotalBytes} ` +
      'bytes together (objects measured at the send); unique content ids; header names case-insensitive ' +
      '(reserved ones refused in any case, none twice); no lone surrogates. The pipeline counts lengths in UTF-16 code units.',
    type: 'object',
    additionalProperties: false,
    required: fields.filter(([, f]) => f.kind === 'addresses' && (f.minItems ?? 0) > 0).map(([name]) => name),
    properties: Object.fromEntries(fields.map(([name, f]) => [name, field(f)])),
    oneOf: CONTENT,
    definitions: {
      address: ADDRESS,
      idempotencyKey: text(
        idempotencyKey.rules,
        `The optional SNS message attribute "${idempotencyKey.attribute}" (DataType ${idempotencyKey.types.join(' or ')}), ` +
          'not part of the body: messages published with the same key are sent once. A String key is compared in ' +
          'Unicode NFC; a Number key by its value (1e3, 1000 and 1000.0 are the key 1000), as SNS takes Numbers: ' +
          `at most ${idempotencyKey.number.maxDigits} significant digits, between 10^${idempotencyKey.number.minExponent} ` +
          `and 10^${idempotencyKey.number.maxExponent} in magnitude.`,
      ),
    },
  };
}

/** The schema file's text (generated, so .prettierignore leaves it as it is). */
export function schemaText(): string {
  return `${JSON.stringify(emailMessageSchema(), null, 2)}\n`;
}

/** Writes {@link SCHEMA_FILE}. */
export function writeSchema(): string {
  writeFileSync(SCHEMA_FILE, schemaText());
  return SCHEMA_FILE;
}

if (require.main === module) {
  console.log(`wrote ${path.relative(process.cwd(), writeSchema())}`);
}
