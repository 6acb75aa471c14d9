/**
 * What the in-process harnesses (the tests under test/, the benchmarks in tools/dev/bench/) wire
 * by hand beside the handler that handler.ts's createHandler builds: the claim's persistence layer
 * and attempt ids, confirm before resend, the SES request, the attachments and their byte budget,
 * and the completion write's margin. Never part of the send bundle: main.ts imports handler.ts,
 * and nothing in this folder imports this file (test/unit/structure.test.ts).
 */
export { COMPLETION_RETRY_MARGIN_MS } from './claim/claim';
export { LedgerAwarePersistenceLayer, newAttemptId } from './claim/persistence';
export { createSendConfirmation } from './confirm';
export { createAttachmentObjects, type ObjectStore } from './send/attachments';
export { budgetFromEnvironment } from './send/byte-budget';
export { buildSendEmailInput } from './send/email';
