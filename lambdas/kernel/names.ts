/**
 * The names the pipeline's parts share: what the send function decides per record (the
 * `decision` log field), the metrics the functions publish and the alarms and dashboard read,
 * and the attributes a dead letter and a retried copy carry. No imports: the CLI, the construct
 * and the local tools read them without loading any function's dependencies.
 */

/** What the send function decides for each record, logged as the `decision` field of one line. */
export const DECISIONS = ['sent', 'duplicate', 'dead-lettered', 'retry', 'scheduled', 'cancelled'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Metric names the send function publishes (Powertools Metrics, embedded metric format). */
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
  /** Writes to the shared rate lease (leases, borrows and their conditional failures). */
  rateLeaseWrites: 'RateLeaseWrites',
  /** Times a container fell back to its static share because the shared lease could not be reached. */
  rateLeaseFallbacks: 'RateLeaseFallbacks',
  /**
   * Times a lease found its lane's item holding a value no lease writes (far ahead, below zero, not
   * a number) and repaired it, or paced to the static share until it was.
   */
  rateLeaseRepairs: 'RateLeaseRepairs',
} as const;

/** The send function's counts by lane: dimensions `service` and `lane` (normal, high). */
export const LANE_METRIC = {
  /** Recipients given a send slot: the rate each lane used. */
  recipientsPaced: 'RecipientsPaced',
} as const;

/** The lanes of the pipeline: the queue a record came from (the high-priority topic feeds the high lane). */
export const LANES = ['normal', 'high'] as const;
export type Lane = (typeof LANES)[number];

/**
 * The SNS message attribute that once chose the lane. The pipeline ignores it: high priority is a
 * permission, publishing to the high-priority topic (HighPriorityTopicArn). Kept for the clients
 * that still set it.
 */
export const PRIORITY_ATTRIBUTE = 'priority';

/**
 * The send function's scheduling and cancel counts (same namespace and `service` dimension), apart
 * from METRIC: the dashboard and alarms (lib/construct/monitoring) do not show them yet.
 */
export const SCHEDULE_METRIC = {
  /**
   * A copy not yet due deferred by one more hop: by the send function into the schedule queue
   * (schedule.ts; the first hop of a key counts EmailsScheduled too), or by the schedule function
   * within it (lambdas/schedule/).
   */
  scheduleHops: 'ScheduleHops',
  emailsScheduled: 'EmailsScheduled',
  /** A copy of a cancelled key suppressed at its claim: never sent. */
  cancelledSuppressed: 'CancelledSuppressed',
} as const;

/** The message attributes a dead-lettered record carries (the DLQ tools and the CLI read them). */
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

/**
 * The message attributes a retried copy carries (the send function's retry budget, and the DLQ
 * tools, which leave them off a redriven message).
 */
export const RETRY_ATTRIBUTE = {
  /** Epoch milliseconds when the first copy reached the work queue. */
  firstEnqueuedAt: 'retry-first-enqueued-at',
  /** 1 for the first copy the handler re-enqueued, 2 for the next, ... */
  attempt: 'retry-attempt',
  /** 1 for the first copy a not-yet-due message was deferred as (schedule.ts), 2 for the next hop, ... */
  scheduleHop: 'schedule-hop',
  /**
   * On a copy in the schedule queue: its `sendAt` in epoch milliseconds, as the send function read
   * it from the body (the schedule function waits for it without reading the body).
   */
  scheduleSendAt: 'schedule-send-at',
  /** On a copy in the schedule queue: the lane it came from (`normal`, `high`), whose queue it goes back to when due. */
  scheduleLane: 'schedule-lane',
  /** On a copy in the schedule queue from a team's queue: the team, whose queue it goes back to when due. */
  scheduleTeam: 'schedule-team',
} as const;

/** The send function's confirm-before-resend counts (same namespace and `service` dimension). */
export const CONFIRM_METRIC = {
  /** An unknown-fate send that the ledger showed SES had accepted: completed without a send. */
  confirmedBySesEvent: 'ConfirmedBySesEvent',
  /** An unknown-fate send with no SES event after the grace: sent again (may be a duplicate). */
  unconfirmedResends: 'UnconfirmedResends',
  /** An unknown-fate send still within the grace: retried later without sending. */
  awaitingConfirmation: 'AwaitingSendConfirmation',
} as const;

/** Metric names of the ledger function. */
export const LEDGER_METRIC = {
  eventsRecorded: 'LedgerEventsRecorded',
  duplicateEvents: 'LedgerDuplicateEvents',
  untaggedEvents: 'LedgerUntaggedEvents',
  statusChanges: 'LedgerStatusChanges',
  /** Events not recorded because they are not the pipeline's own: foreign origin, or bound to no send of theirs. */
  untrustedEvents: 'LedgerUntrustedEvents',
} as const;

/**
 * SES's auto-tag naming the configuration set of a send: the dimension of the per-set event counts
 * and of the per-set reputation metrics (`email-pipeline verify` checks SES publishes it).
 */
export const CONFIGURATION_SET_DIMENSION = 'ses:configuration-set';
