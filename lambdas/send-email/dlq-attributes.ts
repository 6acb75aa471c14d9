/**
 * The message attributes a dead-lettered record carries. Import-free, so the DLQ tools
 * and the CLI can read them without loading the handler's dependencies.
 */
export const DLQ_ATTRIBUTE = {
  errorClass: 'error-class',
  errorCode: 'error-code',
  reason: 'error-reason',
  dedupeKey: 'dedupe-key',
  snsMessageId: 'sns-message-id',
  failedAt: 'failed-at',
  sourceMessageId: 'source-message-id',
  receiveCount: 'receive-count',
} as const;
