/**
 * Contract v1.2: the rules of `attachments` and `headers`, one test each, every issue naming its
 * field; and a v1.1 message validates to the same email as before (its payload hash is unchanged).
 */
import {
  ATTACHMENT_LIMITS,
  ATTACHMENT_PATTERNS,
  HEADER_LIMITS,
  InvalidMessageError,
  LIMITS,
  validateEmail,
  type ValidationIssue,
} from '../../../../../lambdas/kernel/contract';
import { validMessage } from '../../../helpers';

function issuesOf(message: unknown): readonly ValidationIssue[] {
  try {
    validateEmail(message);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return (error as InvalidMessageError).issues;
  }
  throw new Error('expected the message to be refused');
}

function issue(field: string, reason: string): ValidationIssue {
  return { field, reason: expect.stringContaining(reason) as unknown as string };
}

const pdf = { filename: 'invoice.pdf', contentType: 'application/pdf', content: 'JVBERi0xLjQ=' };

function withAttachment(fields: Record<string, unknown>): Record<string, unknown> {
  return { ...validMessage, attachments: [{ ...pdf, ...fields }] };
}

function withHeaders(headers: unknown): Record<string, unknown> {
  return { ...validMessage, headers };
}

describe('attachments', () => {
  test('an inline attachment is taken, its disposition set to attachment', () => {
    expect(validateEmail({ ...validMessage, attachments: [pdf] }).attachments).toEqual([
      { ...pdf, disposition: 'attachment' },
    ]);
  });

  test('an attachment by s3Key is taken as a reference', () => {
    const email = validateEmail(withAttachment({ content: undefined, s3Key: 'reports/q1.pdf' }));
    expect(email.attachments).toEqual([
      { filename: 'invoice.pdf', contentType: 'application/pdf', disposition: 'attachment', s3Key: 'reports/q1.pdf' },
    ]);
  });

  test('a message without attachments or headers validates as in v1.1 (no new keys: same payload hash)', () => {
    expect(Object.keys(validateEmail(validMessage))).not.toEqual(expect.arrayContaining(['attachments']));
    expect(validateEmail(validMessage)).not.toHaveProperty('headers');
  });

  test('attachments must be a list', () => {
    expect(issuesOf({ ...validMessage, attachments: pdf })).toEqual([issue('attachments', 'must be a list')]);
  });

  test(`at most ${ATTACHMENT_LIMITS.maxAttachments} attachments`, () => {
    const many = Array.from({ length: ATTACHMENT_LIMITS.maxAttachments + 1 }, () => pdf);
    expect(issuesOf({ ...validMessage, attachments: many })).toEqual([issue('attachments', 'at most 10')]);
  });

  test('a file name with a path is refused on attachments[0].filename', () => {
    expect(issuesOf(withAttachment({ filename: '../../../../../etc/passwd' }))).toEqual([
      issue('attachments[0].filename', 'without a path'),
    ]);
    expect(issuesOf(withAttachment({ filename: 'C:\\evil.pdf' }))).toEqual([
      issue('attachments[0].filename', 'without a path'),
    ]);
  });

  test('a file name with a control character (header injection) is refused', () => {
    expect(issuesOf(withAttachment({ filename: 'a\r\nb.pdf' }))).toEqual([
      issue('attachments[0].filename', 'control characters'),
    ]);
  });

  test('a file name with a text-direction override is refused', () => {
    expect(issuesOf(withAttachment({ filename: 'invoice\u202efdp.exe' }))).toEqual([
      issue('attachments[0].filename', 'text-direction'),
    ]);
  });

  test.each(['setup.exe', 'RUN.BAT', 'x.js', 'a.pdf.vbs', 'script.ps1'])(
    'a file type SES blocks is refused: %s',
    (filename) => {
      expect(issuesOf(withAttachment({ filename }))).toEqual([issue('attachments[0].filename', 'SES does not send')]);
    },
  );

  test('a file name ending in a dot or a space is refused (Windows would drop it: x.exe.)', () => {
    expect(issuesOf(withAttachment({ filename: 'x.exe.' }))).toEqual([issue('attachments[0].filename', 'end with')]);
  });

  test.each([
    ['an ideographic space (U+3000)', 'x.exe\u3000'],
    ['a no-break space (U+00A0)', 'x.pdf\u00a0'],
    ['a narrow no-break space (U+202F)', 'invoice.pdf\u202f'],
    ['an em space (U+2003)', 'x.exe\u2003'],
    ['a line separator (U+2028)', 'x.exe\u2028'],
  ])('a file name ending in %s is refused', (_, filename) => {
    expect(issuesOf(withAttachment({ filename }))).toEqual([issue('attachments[0].filename', 'end with')]);
  });

  test('the trailing-space rule covers exactly the characters of Unicode White_Space (and a dot)', () => {
    const inRule: number[] = [];
    const whiteSpace: number[] = [];
    for (let code = 0; code <= 0xffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      if (ATTACHMENT_PATTERNS.trailingDotOrSpace.test(`a${char}`)) inRule.push(code);
      if (/\p{White_Space}/u.test(char) || char === '.') whiteSpace.push(code);
    }
    expect(inRule).toEqual(whiteSpace);
  });

  test('a space inside a file name is taken', () => {
    expect(validateEmail(withAttachment({ filename: 'report\u3000 2026.pdf' })).attachments).toHaveLength(1);
  });

  test.each(['x.exe::$DATA', 'C:evil.pdf', 'a:b.pdf'])('a file name with a colon is refused: %j', (filename) => {
    expect(issuesOf(withAttachment({ filename }))).toEqual([issue('attachments[0].filename', 'must not contain :')]);
  });

  test(`a file name over ${ATTACHMENT_LIMITS.maxFileNameLength} characters is refused`, () => {
    expect(issuesOf(withAttachment({ filename: `${'a'.repeat(252)}.pdf` }))).toEqual([
      issue('attachments[0].filename', 'at most 255'),
    ]);
  });

  test('a file name is required', () => {
    expect(issuesOf(withAttachment({ filename: undefined }))).toEqual([
      issue('attachments[0].filename', 'is required'),
    ]);
  });

  test('a content type must be type/subtype', () => {
    expect(issuesOf(withAttachment({ contentType: 'pdf' }))).toEqual([
      issue('attachments[0].contentType', 'MIME type'),
    ]);
    expect(issuesOf(withAttachment({ contentType: 'text/plain\r\nX: y' }))).toEqual([
      issue('attachments[0].contentType', 'MIME type'),
    ]);
  });

  test('content must be canonical base64', () => {
    expect(issuesOf(withAttachment({ content: 'JVBERi0xLjQ' }))).toEqual([issue('attachments[0].content', 'base64')]);
    expect(issuesOf(withAttachment({ content: '' }))).toEqual([issue('attachments[0].content', 'base64')]);
  });

  test('content or s3Key, exactly one', () => {
    expect(issuesOf(withAttachment({ content: undefined }))).toEqual([issue('attachments[0].content', 'one of them')]);
    expect(issuesOf(withAttachment({ s3Key: 'a.pdf' }))).toEqual([issue('attachments[0].s3Key', 'cannot be combined')]);
  });

  test('an s3Key of more than 1024 bytes or with control characters is refused', () => {
    const byKey = (s3Key: string) => withAttachment({ content: undefined, s3Key });
    expect(issuesOf(byKey('k'.repeat(1025)))).toEqual([issue('attachments[0].s3Key', '1 to 1024 bytes')]);
    expect(issuesOf(byKey('a\nb'))).toEqual([issue('attachments[0].s3Key', 'control characters')]);
  });

  test.each(['invoice.pdf', 'reports/2026/q1.pdf', 'team-a/x..y.txt', '.hidden', 'a/..b/c', 'a b/c d.pdf'])(
    'a clean relative s3Key is taken: %j',
    (s3Key) => {
      expect(validateEmail(withAttachment({ content: undefined, s3Key })).attachments).toEqual([
        expect.objectContaining({ s3Key }),
      ]);
    },
  );

  test.each([
    ['../../../../other/x.txt', '. or .. segment'],
    ['a/../../other/x', '. or .. segment'],
    ['team/..', '. or .. segment'],
    ['../../../x.txt', '. or .. segment'],
    ['a/./b', '. or .. segment'],
    ['..', '. or .. segment'],
    ['/abs/x.txt', 'no leading /'],
    ['a//b', 'empty segment'],
    ['a/', 'empty segment'],
    ['a\\..\\b', 'backslash'],
    ['a\tb', 'control characters'],
    ['a\u0085b', 'control characters'],
  ])('an s3Key that is no clean relative key is refused: %j', (s3Key, reason) => {
    expect(issuesOf(withAttachment({ content: undefined, s3Key }))).toEqual([issue('attachments[0].s3Key', reason)]);
  });

  test('disposition is attachment or inline', () => {
    expect(issuesOf(withAttachment({ disposition: 'embedded' }))).toEqual([
      issue('attachments[0].disposition', 'attachment, inline'),
    ]);
  });

  test('an inline attachment needs a content id, printable ASCII without < > or spaces, unique', () => {
    expect(issuesOf(withAttachment({ disposition: 'inline' }))).toEqual([
      issue('attachments[0].contentId', 'is required'),
    ]);
    expect(issuesOf(withAttachment({ contentId: '<logo>' }))).toEqual([
      issue('attachments[0].contentId', 'printable ASCII'),
    ]);
    expect(
      issuesOf({
        ...validMessage,
        attachments: [
          { ...pdf, contentId: 'a' },
          { ...pdf, contentId: 'a' },
        ],
      }),
    ).toEqual([issue('attachments[1].contentId', 'another attachment')]);
  });

  test('an unknown attachment field is refused', () => {
    expect(issuesOf(withAttachment({ url: 'https://example.com/a.pdf' }))).toEqual([
      issue('attachments[0].url', 'not a known field'),
    ]);
  });

  test('inline attachments count with the content, so the SNS message fits: larger files go by s3Key', () => {
    const big = 'A'.repeat(LIMITS.maxContentBytes - 8);
    expect(issuesOf(withAttachment({ content: big }))).toEqual([issue('attachments', 'send larger files by s3Key')]);
  });

  test(`inline files over ${ATTACHMENT_LIMITS.maxTotalBytes} bytes together are refused`, () => {
    const content = 'A'.repeat(Math.ceil((ATTACHMENT_LIMITS.maxTotalBytes + 3) / 3) * 4);
    expect(issuesOf(withAttachment({ content }))).toEqual(
      expect.arrayContaining([issue('attachments', `over the limit of ${ATTACHMENT_LIMITS.maxTotalBytes}`)]),
    );
  });
});

describe('headers', () => {
  const unsubscribe = {
    'List-Unsubscribe': '<https://example.com/unsubscribe/42>, <mailto:unsubscribe@example.com?subject=42>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };

  test('one-click unsubscribe headers (RFC 8058) are taken as given', () => {
    expect(validateEmail(withHeaders(unsubscribe)).headers).toEqual(unsubscribe);
  });

  test('headers must be an object', () => {
    expect(issuesOf(withHeaders(['X-A: b']))).toEqual([issue('headers', 'name -> value')]);
  });

  test(`at most ${HEADER_LIMITS.maxHeaders} headers`, () => {
    const many = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-H${i}`, 'v']));
    expect(issuesOf(withHeaders(many))).toEqual([issue('headers', 'at most 15')]);
  });

  test.each(['X Campaign', 'X:Campaign', 'X-Café', ''])(
    'a name that is no RFC 5322 field name is refused: %j',
    (name) => {
      expect(issuesOf(withHeaders({ [name]: 'v' }))).toEqual([issue(`headers.${name}`, 'RFC 5322')]);
    },
  );

  test('a name over 126 characters is refused', () => {
    const name = `X-${'a'.repeat(125)}`;
    expect(issuesOf(withHeaders({ [name]: 'v' }))).toEqual([issue(`headers.${name}`, '1 to 126')]);
  });

  test.each([
    'From',
    'to',
    'CC',
    'Bcc',
    'Subject',
    'Reply-To',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'content-transfer-encoding',
    'Return-Path',
    'DKIM-Signature',
    'X-SES-CONFIGURATION-SET',
    'Sender',
    'Received',
  ])('a name SES or the pipeline sets is refused: %s', (name) => {
    expect(issuesOf(withHeaders({ [name]: 'v' }))).toEqual([issue(`headers.${name}`, 'set by SES or the pipeline')]);
  });

  test.each([
    ['Disposition-Notification-To', 'read receipt'],
    ['return-receipt-to', 'read receipt'],
    ['Errors-To', 'bounces'],
    ['RECEIVED-SPF', 'trace field'],
    ['Resent-From', 'Resent- fields'],
    ['resent-to', 'Resent- fields'],
    ['RESENT-MESSAGE-ID', 'Resent- fields'],
    ['Resent-X', 'Resent- fields'],
  ])('a name that would direct mail or claim a history is refused: %s', (name, reason) => {
    expect(issuesOf(withHeaders({ [name]: 'eve@example.com' }))).toEqual([issue(`headers.${name}`, reason)]);
  });

  test('a name that only contains a refused one is taken', () => {
    const headers = { 'X-Errors-To': 'v', 'X-Resent-From': 'v', 'Presented-By': 'v' };
    expect(validateEmail(withHeaders(headers)).headers).toEqual(headers);
  });

  test('a name given twice in other cases is refused', () => {
    expect(issuesOf(withHeaders({ 'X-A': 'v', 'x-a': 'w' }))).toEqual([issue('headers.x-a', 'given twice')]);
  });

  test('a value with CR or LF is refused as header injection', () => {
    expect(issuesOf(withHeaders({ 'X-A': 'v\r\nBcc: eve@example.com' }))).toEqual([
      issue('headers.X-A', 'header injection'),
    ]);
  });

  test('a value beyond printable ASCII is refused', () => {
    expect(issuesOf(withHeaders({ 'X-A': 'café' }))).toEqual([issue('headers.X-A', 'printable ASCII')]);
    expect(issuesOf(withHeaders({ 'X-A': 'a\tb' }))).toEqual([issue('headers.X-A', 'printable ASCII')]);
  });

  test('an empty or non-string value is refused', () => {
    expect(issuesOf(withHeaders({ 'X-A': ' ' }))).toEqual([issue('headers.X-A', 'not be empty')]);
    expect(issuesOf(withHeaders({ 'X-A': 42 }))).toEqual([issue('headers.X-A', 'must be a string')]);
  });

  test(`a value over ${HEADER_LIMITS.maxValueLength} characters is refused`, () => {
    expect(issuesOf(withHeaders({ 'X-A': 'v'.repeat(871) }))).toEqual([issue('headers.X-A', 'at most 870')]);
  });
});
