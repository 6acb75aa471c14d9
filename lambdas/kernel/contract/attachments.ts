/**
 * Contract v1.2, `attachments`: their declaration (limits, SES's blocked file types, the types a
 * publisher writes) and their check. An attachment travels inline (base64 `content`, inside the
 * SNS message) or by reference (`s3Key`, an object in the pipeline's attachments bucket, for what
 * an SNS message cannot carry). The sizes of objects are known only when the send stage reads
 * them (send-email/send/attachments.ts); everything else is checked here. No I/O.
 */
import { BIDI_OR_INVISIBLE } from './address';

/** Reports one problem of a field (validate.ts's collector). */
export type AddIssue = (field: string, reason: string) => void;

export const ATTACHMENT_LIMITS = {
  /**
   * Attachments per email. SES sets no count of its own (only 40 MB a message); ten keeps the
   * object reads of one send (one HeadObject before the claim, one GetObject at the send, each
   * in the send's time budget) and the MIME parts a recipient sees bounded.
   */
  maxAttachments: 10,
  /** SES's Attachment.FileName: at most 255 characters. */
  maxFileNameLength: 255,
  /** SES's Attachment.ContentId: 1 to 78 characters. */
  maxContentIdLength: 78,
  /** A MIME type (`type/subtype`, RFC 6838 names), parameters not allowed. */
  maxContentTypeLength: 255,
  /** S3 object keys are at most 1024 bytes of UTF-8. */
  maxS3KeyBytes: 1024,
  /**
   * The attachments' decoded bytes together, inline and by reference. SES takes 40 MB a message
   * (https://docs.aws.amazon.com/ses/latest/dg/attachments.html), and MIME base64 makes 4 bytes
   * (and line breaks) of every 3: 25 MiB of files is about 35.9 MB on the wire, leaving room for
   * the bodies (200 KiB) and the headers.
   */
  maxTotalBytes: 25 * 1024 * 1024,
} as const;

/**
 * File extensions SES refuses as attachments, "Amazon SES unsupported attachment types"
 * (https://docs.aws.amazon.com/ses/latest/dg/mime-types.html). Compared case-insensitively on the
 * last extension of the file name.
 */
export const SES_BLOCKED_EXTENSIONS: readonly string[] = [
  'ade', 'adp', 'app', 'asp', 'bas', 'bat', 'cer', 'chm', 'cmd', 'com', 'cpl', 'crt', 'csh', 'der',
  'exe', 'fxp', 'gadget', 'hlp', 'hta', 'inf', 'ins', 'isp', 'its', 'js', 'jse', 'ksh', 'lib', 'lnk',
  'mad', 'maf', 'mag', 'mam', 'maq', 'mar', 'mas', 'mat', 'mau', 'mav', 'maw', 'mda', 'mdb', 'mde',
  'mdt', 'mdw', 'mdz', 'msc', 'msh', 'msh1', 'msh2', 'mshxml', 'msh1xml', 'msh2xml', 'msi', 'msp',
  'mst', 'ops', 'pcd', 'pif', 'plg', 'prf', 'prg', 'reg', 'scf', 'scr', 'sct', 'shb', 'shs', 'sys',
  'ps1', 'ps1xml', 'ps2', 'ps2xml', 'psc1', 'psc2', 'tmp', 'url', 'vb', 'vbe', 'vbs', 'vps',
  'vsmacros', 'vss', 'vst', 'vsw', 'vxd', 'ws', 'wsc', 'wsf', 'wsh', 'xnk',
]; // prettier-ignore

/** The fields of one attachment, the only ones allowed. */
export const ATTACHMENT_FIELDS = ['filename', 'contentType', 'content', 's3Key', 'disposition', 'contentId'] as const;

/** How a mail client shows the part: as a file, or in the HTML body where it says `cid:<contentId>`. */
export const DISPOSITIONS = ['attachment', 'inline'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The patterns of the rules, shared with the JSON Schema (tools/build/schema.ts). */
export const ATTACHMENT_PATTERNS = {
  /** No path: a file name is the last part of a path, never a path (`../../etc/passwd`). */
  pathSeparator: /[/\\]/,
  /** A drive (`C:x`) or an NTFS stream (`x.exe::$DATA`, which Windows opens as `x.exe`). */
  colon: /:/,
  /**
   * A last character Windows drops (a dot, a space) or any other white space: `x.exe\u3000` would
   * look like `x.exe` and pass the check of blocked types. The characters of Unicode's White_Space
   * property are spelled out, as JSON Schema validators need not know `\p{...}` (a unit test checks
   * them against it).
   */
  trailingDotOrSpace: /[.\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/,
  control: CONTROL,
  /** Canonical base64 (RFC 4648, padded, no line breaks or spaces), at least one byte. */
  base64: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/,
  /** `type/subtype`, RFC 6838 restricted names. */
  contentType: /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/,
  /** Printable ASCII but `<`, `>` and space: it goes between angle brackets in Content-ID. */
  contentId: /^[!-;=?-~]{1,78}$/,
} as const;

/** A rule an `s3Key` must not break: what it finds, and why that is refused. */
export interface S3KeyRule {
  readonly pattern: RegExp;
  readonly reason: string;
}

/**
 * An `s3Key` is a clean relative key: segments between single slashes, none empty, `.` or `..`,
 * no leading slash, no backslash, no control characters. S3 itself takes such keys literally, but
 * whatever joins, normalises or prefixes keys (a team's prefix, a tool that syncs the bucket to
 * disk) would read `../other/x.txt` as another place. A key at the bucket's top level is clean.
 */
export const S3_KEY_RULES: readonly S3KeyRule[] = [
  { pattern: CONTROL, reason: 'must not contain control characters' },
  { pattern: /^\//, reason: 'must be a relative key: no leading /' },
  { pattern: /\\/, reason: 'must not contain a backslash (\\): segments are separated by / only' },
  { pattern: /(?:^|\/)\.{1,2}(?:\/|$)/, reason: 'must not have a . or .. segment (../other/x.txt)' },
  { pattern: /\/\/|\/$/, reason: 'must not have an empty segment (a//b, or a trailing /)' },
];

/** What is wrong with an s3Key, or undefined. */
export function s3KeyIssue(key: string): string | undefined {
  if (key === '' || Buffer.byteLength(key, 'utf8') > ATTACHMENT_LIMITS.maxS3KeyBytes) {
    return `must be 1 to ${ATTACHMENT_LIMITS.maxS3KeyBytes} bytes`;
  }
  if (!key.isWellFormed()) return 'must not contain control characters or invalid Unicode (a lone surrogate)';
  return S3_KEY_RULES.find((rule) => rule.pattern.test(key))?.reason;
}

/** An attachment as a publisher writes it: inline base64 `content`, or `s3Key` in the attachments bucket. */
export type AttachmentInput = {
  /** The name the recipient sees: no path, no control characters, not a file type SES blocks. */
  readonly filename: string;
  /** Its MIME type, e.g. `application/pdf`. */
  readonly contentType: string;
  /** `attachment` (a file) or `inline` (shown in the HTML body at `cid:<contentId>`). @default "attachment" */
  readonly disposition?: Disposition;
  /** What the HTML body refers to as `cid:<contentId>`; required with `inline`. @default none */
  readonly contentId?: string;
} & ({ readonly content: string; readonly s3Key?: never } | { readonly s3Key: string; readonly content?: never });

/** One attachment, validated: the disposition always set. The send stage adds what it read of an object. */
export type Attachment = {
  readonly filename: string;
  readonly contentType: string;
  readonly disposition: Disposition;
  readonly contentId?: string;
} & (
  | { readonly content: string }
  | {
      readonly s3Key: string;
      /** The object's ETag, written by the send stage before the claim: the payload hash covers it. */
      readonly etag?: string;
    }
);

/**
 * True for canonical base64 text ({@link ATTACHMENT_PATTERNS.base64}), checked without the pattern's
 * repetition group, which overflows V8's regular expression stack on text of megabytes.
 */
export function isBase64(text: string): boolean {
  return text.length > 0 && text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

/** The decoded size of canonical base64 text. */
export function base64Bytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/** What is wrong with a file name, or undefined. */
export function fileNameIssue(name: string): string | undefined {
  if (name.trim() === '') return 'must not be empty';
  if (name.length > ATTACHMENT_LIMITS.maxFileNameLength) {
    return `must be at most ${ATTACHMENT_LIMITS.maxFileNameLength} characters`;
  }
  if (ATTACHMENT_PATTERNS.pathSeparator.test(name)) return 'must be a file name without a path (no / or \\)';
  if (ATTACHMENT_PATTERNS.colon.test(name)) return 'must not contain : (a drive or an NTFS stream: x.exe::$DATA)';
  if (CONTROL.test(name)) return 'must not contain control characters (CR, LF, ...)';
  if (BIDI_OR_INVISIBLE.test(name)) return 'must not contain invisible or text-direction characters';
  if (!name.isWellFormed()) return 'contains invalid Unicode (a lone surrogate)';
  if (/^\.+$/.test(name)) return 'must be a file name, not . or ..';
  // Windows drops trailing dots and spaces, which would turn "x.exe." back into "x.exe"; any other
  // trailing white space (U+3000) hides the real extension from the check below and from the reader.
  if (ATTACHMENT_PATTERNS.trailingDotOrSpace.test(name)) return 'must not end with a dot or a space (of any kind)';
  const dot = name.lastIndexOf('.');
  const extension = dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
  if (SES_BLOCKED_EXTENSIONS.includes(extension)) {
    return `is a file type SES does not send (.${extension}; see "Amazon SES unsupported attachment types")`;
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One attachment, or undefined when it has an issue (each reported on its field). */
function readAttachment(add: AddIssue, at: string, value: unknown): Attachment | undefined {
  if (!isObject(value)) {
    add(at, `must be an object { filename, contentType, content or s3Key }, got ${describe(value)}`);
    return undefined;
  }
  let ok = true;
  const issue = (field: string, reason: string) => {
    ok = false;
    add(`${at}.${field}`, reason);
  };
  const allowed: readonly string[] = ATTACHMENT_FIELDS;
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) issue(key, `is not a known field (allowed: ${allowed.join(', ')})`);
  }
  const { filename, contentType, content, s3Key, disposition = 'attachment', contentId } = value;
  if (typeof filename !== 'string') issue('filename', `is required: a string, got ${describe(filename)}`);
  else {
    const problem = fileNameIssue(filename);
    if (problem) issue('filename', problem);
  }
  if (typeof contentType !== 'string') issue('contentType', `is required: a MIME type, got ${describe(contentType)}`);
  else if (
    contentType.length > ATTACHMENT_LIMITS.maxContentTypeLength ||
    !ATTACHMENT_PATTERNS.contentType.test(contentType)
  ) {
    issue('contentType', 'must be a MIME type like application/pdf (type/subtype, no parameters)');
  }
  if (content === undefined && s3Key === undefined) issue('content', 'give content (base64) or s3Key, one of them');
  else if (content !== undefined && s3Key !== undefined) issue('s3Key', 'cannot be combined with content: give one');
  else if (content !== undefined) {
    if (typeof content !== 'string') issue('content', `must be base64 text, got ${describe(content)}`);
    else if (!isBase64(content)) {
      issue('content', 'must be base64 (RFC 4648, padded, no spaces or line breaks) of at least one byte');
    }
  } else if (typeof s3Key !== 'string') issue('s3Key', `must be a string, got ${describe(s3Key)}`);
  else {
    const problem = s3KeyIssue(s3Key);
    if (problem) issue('s3Key', problem);
  }
  if (!(DISPOSITIONS as readonly unknown[]).includes(disposition)) {
    issue('disposition', `must be one of ${DISPOSITIONS.join(', ')}`);
  }
  if (contentId !== undefined && (typeof contentId !== 'string' || !ATTACHMENT_PATTERNS.contentId.test(contentId))) {
    issue(
      'contentId',
      `must be 1 to ${ATTACHMENT_LIMITS.maxContentIdLength} printable ASCII characters but <, > and space`,
    );
  } else if (disposition === 'inline' && contentId === undefined) {
    issue('contentId', 'is required with disposition inline: the HTML body shows the part at cid:<contentId>');
  }
  if (!ok) return undefined;
  return {
    filename: filename as string,
    contentType: contentType as string,
    disposition: disposition as Disposition,
    ...(contentId !== undefined ? { contentId: contentId as string } : {}),
    ...(content !== undefined ? { content: content as string } : { s3Key: s3Key as string }),
  };
}

/** The attachments as validated, and the base64 characters the inline ones take in the SNS message. */
export interface ReadAttachments {
  readonly attachments: readonly Attachment[];
  readonly inlineChars: number;
}

/**
 * Checks `attachments` (undefined when the message has none): the count, each attachment's fields,
 * unique content ids, and the inline files' decoded bytes within {@link ATTACHMENT_LIMITS.maxTotalBytes}.
 * Whether the inline text fits in the SNS message is the caller's (validate.ts: it counts with the content).
 */
export function readAttachments(add: AddIssue, value: unknown): ReadAttachments | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    add('attachments', `must be a list of attachments, got ${describe(value)}`);
    return undefined;
  }
  const { maxAttachments, maxTotalBytes } = ATTACHMENT_LIMITS;
  if (value.length > maxAttachments) add('attachments', `must have at most ${maxAttachments} attachments`);
  const attachments: Attachment[] = [];
  const contentIds = new Set<string>();
  value.forEach((item: unknown, i) => {
    const attachment = readAttachment(add, `attachments[${i}]`, item);
    if (!attachment) return;
    if (attachment.contentId !== undefined) {
      if (contentIds.has(attachment.contentId)) add(`attachments[${i}].contentId`, 'is used by another attachment');
      contentIds.add(attachment.contentId);
    }
    attachments.push(attachment);
  });
  const inline = attachments.flatMap((a) => ('content' in a ? [a.content] : []));
  const decoded = inline.reduce((sum, text) => sum + base64Bytes(text), 0);
  if (decoded > maxTotalBytes) add('attachments', `are ${decoded} bytes together, over the limit of ${maxTotalBytes}`);
  return { attachments, inlineChars: inline.reduce((sum, text) => sum + text.length, 0) };
}
