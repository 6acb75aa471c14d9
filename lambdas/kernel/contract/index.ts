/**
 * The message contract: its declaration (fields, rules, limits, types) and its validation. The
 * send function, the publisher client, the CLI and the schema generator import it from here.
 */
export * from './declaration';
export * from './validate';
export {
  ATTACHMENT_LIMITS,
  ATTACHMENT_PATTERNS,
  DISPOSITIONS,
  S3_KEY_RULES,
  SES_BLOCKED_EXTENSIONS,
  base64Bytes,
  s3KeyIssue,
  type Disposition,
  type S3KeyRule,
} from './attachments';
export { HEADER_LIMITS, HEADER_PATTERNS, REFUSED_HEADERS, type RefusedHeader } from './headers';
export * from './send-at';
