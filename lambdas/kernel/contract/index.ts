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
  SES_BLOCKED_EXTENSIONS,
  base64Bytes,
  type Disposition,
} from './attachments';
export { HEADER_LIMITS, HEADER_PATTERNS } from './headers';
export * from './send-at';
