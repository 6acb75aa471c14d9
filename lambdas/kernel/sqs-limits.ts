/**
 * SQS's own limits, which the settings' rules (lib/settings) and the send function's retries
 * (send-email) both build on. Facts of the service, not settings.
 */

/** The longest `DelaySeconds` of a message: a retry's copy waits at most this long. */
export const SQS_MAX_DELAY_SECONDS = 900;

/** The longest a queue keeps a message (the DLQs keep theirs this long). */
export const SQS_MAX_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/** The longest visibility timeout (ChangeMessageVisibility). */
export const SQS_MAX_VISIBILITY_SECONDS = 12 * 60 * 60;
