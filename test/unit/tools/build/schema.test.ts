/**
 * The JSON Schema for publishers in other languages: generated from the contract's declaration,
 * committed, and in agreement with validateEmail (the pipeline's own check).
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { idempotencyKeyIssues, InvalidMessageError, LIMITS, validateEmail } from '../../../../lambdas/kernel/contract';
import { emailMessageSchema, SCHEMA_FILE, schemaText } from '../../../../tools/build/schema';
import { addresses, validMessage } from '../../helpers';

const schema = emailMessageSchema();
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
const schemaAccepts = ajv.compile(schema);
const keySchemaAccepts = ajv.compile({ $ref: `${String(schema.$id)}#/definitions/idempotencyKey` });

function pipelineAccepts(message: unknown): boolean {
  try {
    validateEmail(message);
    return true;
  } catch (error) {
    if (error instanceof InvalidMessageError) return false;
    throw error;
  }
}

test('the committed schema is the one the contract declaration generates (npm run schema)', () => {
  expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
});

test('the schema takes its limits from the contract', () => {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  expect(properties.subject?.maxLength).toBe(LIMITS.maxSubjectLength);
  expect(properties.tags?.maxProperties).toBe(LIMITS.maxTags);
  expect(JSON.stringify(properties.replyTo)).toContain(`"maxItems":${LIMITS.maxReplyTo}`);
  expect(schema.required).toEqual(['to']);
});

const VALID: Record<string, unknown> = {
  'the minimal message': validMessage,
  'one address as a string': { ...validMessage, to: 'ada@example.com' },
  'a display name': { ...validMessage, to: 'Ada Lovelace <ada@example.com>' },
  'html only': { to: 'ada@example.com', subject: 'S', html: '<p>Hi</p>' },
  'text and html, cc, bcc, replyTo and tags': {
    ...validMessage,
    html: '<p>Hi</p>',
    cc: ['b@example.com'],
    bcc: 'c@example.com',
    replyTo: ['d@example.com'],
    tags: { campaign: 'spring-2026' },
  },
  'a template with data': { to: 'ada@example.com', template: { name: 'order_shipped-v2', data: { order: 42 } } },
  'a template without data': { to: 'ada@example.com', template: { name: 'welcome' } },
  'a text body with tabs and new lines': { ...validMessage, text: 'Line 1\r\n\tLine 2' },
  [`a subject of ${LIMITS.maxSubjectLength} characters`]: { ...validMessage, subject: 's'.repeat(998) },
  [`${LIMITS.maxTags} tags`]: {
    ...validMessage,
    tags: Object.fromEntries(addresses(10).map((_, i) => [`t${i}`, 'v'])),
  },
  'v1.2: an inline attachment, one by s3Key and an inline image': {
    ...validMessage,
    attachments: [
      { filename: 'invoice.pdf', contentType: 'application/pdf', content: 'JVBERi0=' },
      { filename: 'report 2026.csv', contentType: 'text/csv', s3Key: 'reports/2026.csv' },
      { filename: 'top-level.csv', contentType: 'text/csv', s3Key: 'top-level.csv' },
      { filename: 'logo.png', contentType: 'image/png', content: 'iVBO', disposition: 'inline', contentId: 'logo' },
    ],
  },
  'v1.2: one-click unsubscribe headers': {
    ...validMessage,
    headers: {
      'List-Unsubscribe': '<https://example.com/u/42>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  },
};

const INVALID: Record<string, unknown> = {
  'not an object': ['ada@example.com'],
  'no recipients': { subject: 'S', text: 'T' },
  'an empty recipient list': { ...validMessage, to: [] },
  'a recipient that is no address': { ...validMessage, to: ['not-an-address'] },
  'a recipient that is a number': { ...validMessage, to: [42] },
  'an unknown field': { ...validMessage, sender: 'me@example.com' },
  'no content': { to: 'ada@example.com', subject: 'S' },
  'text without a subject': { to: 'ada@example.com', text: 'T' },
  'a template with text': { to: 'ada@example.com', template: { name: 'welcome' }, text: 'T' },
  'a template with a subject': { to: 'ada@example.com', template: { name: 'welcome' }, subject: 'S' },
  'a template without a name': { to: 'ada@example.com', template: { data: {} } },
  'a template name with a space': { to: 'ada@example.com', template: { name: 'order shipped' } },
  'a template name too long': { to: 'ada@example.com', template: { name: 'n'.repeat(65) } },
  'an unknown template field': { to: 'ada@example.com', template: { name: 'welcome', version: 2 } },
  'template data that is a list': { to: 'ada@example.com', template: { name: 'welcome', data: [1] } },
  'a header injection in the subject': { ...validMessage, subject: 'Hi\r\nBcc: x@example.com' },
  'a control character in the subject': { ...validMessage, subject: 'Hi\u0007' },
  'a text-direction override in the subject': { ...validMessage, subject: 'Hi \u202e' },
  'a blank subject': { ...validMessage, subject: '   ' },
  'a subject too long': { ...validMessage, subject: 's'.repeat(999) },
  'a control character in the text': { ...validMessage, text: 'Hi\u0000' },
  'a blank html body': { ...validMessage, html: ' \n ' },
  'more than 10 replyTo addresses': { ...validMessage, replyTo: addresses(11) },
  'more than 50 recipients in to': { ...validMessage, to: addresses(51) },
  'more than 10 tags': { ...validMessage, tags: Object.fromEntries(addresses(11).map((_, i) => [`t${i}`, 'v'])) },
  'a reserved tag name': { ...validMessage, tags: { 'Dedupe-key': 'x' } },
  'a tag value with a space': { ...validMessage, tags: { campaign: 'spring 2026' } },
  'a tag value that is a number': { ...validMessage, tags: { campaign: 2026 } },
  'an attachment with a path': {
    ...validMessage,
    attachments: [{ filename: '../../../../etc/passwd', contentType: 'text/plain', content: 'eA==' }],
  },
  'an attachment SES blocks (.EXE)': {
    ...validMessage,
    attachments: [{ filename: 'setup.EXE', contentType: 'application/octet-stream', content: 'eA==' }],
  },
  'an attachment with content and s3Key': {
    ...validMessage,
    attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'eA==', s3Key: 'a.txt' }],
  },
  'an attachment whose content is not base64': {
    ...validMessage,
    attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'not base64!' }],
  },
  'an inline attachment without a content id': {
    ...validMessage,
    attachments: [{ filename: 'a.png', contentType: 'image/png', content: 'eA==', disposition: 'inline' }],
  },
  'a reserved header (any case)': { ...validMessage, headers: { 'content-TYPE': 'text/plain' } },
  'a header asking for read receipts (any case)': {
    ...validMessage,
    headers: { 'disposition-NOTIFICATION-to': 'eve@example.com' },
  },
  'a header of the Resent- family': { ...validMessage, headers: { 'RESENT-From': 'eve@example.com' } },
  'an Errors-To header': { ...validMessage, headers: { 'Errors-To': 'eve@example.com' } },
  'a Received-SPF header': { ...validMessage, headers: { 'Received-SPF': 'pass' } },
  'a file name ending in an ideographic space': {
    ...validMessage,
    attachments: [{ filename: 'x.exe\u3000', contentType: 'application/octet-stream', content: 'eA==' }],
  },
  'a file name with an NTFS stream': {
    ...validMessage,
    attachments: [{ filename: 'x.exe::$DATA', contentType: 'application/octet-stream', content: 'eA==' }],
  },
  ...Object.fromEntries(
    ['../../../other/x.txt', 'a/./b', '/abs/x.txt', 'a//b', 'a/', 'a\\b'].map((s3Key) => [
      `an s3Key that is no clean relative key: ${s3Key}`,
      { ...validMessage, attachments: [{ filename: 'x.txt', contentType: 'text/plain', s3Key }] },
    ]),
  ),
  'a header value with a line break': { ...validMessage, headers: { 'X-Campaign': 'a\r\nBcc: x@example.com' } },
  'more than 15 headers': {
    ...validMessage,
    headers: Object.fromEntries(addresses(16).map((_, i) => [`X-H${i}`, 'v'])),
  },
};

/** What only the pipeline checks (the schema's description lists these). */
const ONLY_THE_PIPELINE_REFUSES: Record<string, unknown> = {
  'more than 50 recipients in to, cc and bcc together': { ...validMessage, to: addresses(30), cc: addresses(21, 'cc') },
  'content over the size limit': { ...validMessage, text: 'x'.repeat(LIMITS.maxContentBytes + 1) },
  'an address whose domain has no dot': { ...validMessage, to: 'ada@localhost' },
  'inline attachments that push the content over the limit': {
    ...validMessage,
    attachments: [
      { filename: 'a.bin', contentType: 'application/octet-stream', content: 'A'.repeat(LIMITS.maxContentBytes) },
    ],
  },
  'two attachments with one content id': {
    ...validMessage,
    attachments: [
      { filename: 'a.png', contentType: 'image/png', content: 'eA==', contentId: 'x' },
      { filename: 'b.png', contentType: 'image/png', content: 'eA==', contentId: 'x' },
    ],
  },
  'one header twice in other cases': { ...validMessage, headers: { 'X-A': 'v', 'x-a': 'w' } },
};

describe('the schema and validateEmail agree', () => {
  test.each(Object.entries(VALID))('both accept %s', (_, message) => {
    expect(pipelineAccepts(message)).toBe(true);
    expect(schemaAccepts(message)).toBe(true);
  });

  test.each(Object.entries(INVALID))('both refuse %s', (_, message) => {
    expect(pipelineAccepts(message)).toBe(false);
    expect(schemaAccepts(message)).toBe(false);
  });

  test.each(Object.entries(ONLY_THE_PIPELINE_REFUSES))('only the pipeline refuses %s', (_, message) => {
    expect(pipelineAccepts(message)).toBe(false);
    expect(schemaAccepts(message)).toBe(true);
  });
});

describe('the idempotency key definition agrees with the key check', () => {
  test.each(['order-42', 'order/42 shipped', 'k'.repeat(LIMITS.maxKeyLength), 'Grüße'])('both accept %j', (key) => {
    expect(idempotencyKeyIssues(key)).toEqual([]);
    expect(keySchemaAccepts(key)).toBe(true);
  });

  test.each(['', ' order-42', 'order-42 ', 'order\n42', 'order\u007f42', 'k'.repeat(LIMITS.maxKeyLength + 1)])(
    'both refuse %j',
    (key) => {
      expect(idempotencyKeyIssues(key)).not.toEqual([]);
      expect(keySchemaAccepts(key)).toBe(false);
    },
  );
});
