/**
 * Metric names the handler publishes (Powertools Metrics, embedded metric format)
 * and the dashboard and alarms read. No imports: the CDK code uses it too.
 */
export const METRIC = {
  emailsSent: 'EmailsSent',
  duplicatesSuppressed: 'DuplicatesSuppressed',
  inProgressConflicts: 'InProgressConflicts',
  permanentFailures: 'PermanentFailures',
  permanentFailuresByReason: 'PermanentFailuresByReason',
  retryableFailures: 'RetryableFailures',
  ambiguousSends: 'AmbiguousSends',
  systemicFailures: 'SystemicFailures',
  failOpenSends: 'FailOpenSends',
  completionWriteFailures: 'CompletionWriteFailures',
  sesSendLatency: 'SesSendLatency',
  sesThrottles: 'SesThrottles',
  sendsHeldByBreaker: 'SendsHeldByBreaker',
  sendsPastDeadline: 'SendsPastDeadline',
  retryAge: 'RetryAgeSeconds',
  retryBudgetExhausted: 'RetryBudgetExhausted',
} as const;
