/**
 * The alarms' props and tuning types: which alarms exist (PipelineAlarmsProps, each documented with
 * its default), their severities, and what a default is made of. Types only.
 */
import type * as cw from 'aws-cdk-lib/aws-cloudwatch';

/** `page`: a person must act now (the paging topic). `warn`: look during working hours (the warning topic). */
export type AlarmSeverity = 'page' | 'warn';

/** How one alarm behaves. Every field is optional; see each alarm for its defaults. */
export interface AlarmTuning {
  /** Create this alarm. @default true */
  readonly enabled?: boolean;
  /** The alarm fires when the statistic is greater than this. @default per alarm */
  readonly threshold?: number;
  /** Periods looked at for each evaluation. @default per alarm */
  readonly evaluationPeriods?: number;
  /** Of those, how many must be above the threshold (at most evaluationPeriods). @default per alarm */
  readonly datapointsToAlarm?: number;
  /** Length of one period in seconds (60 or a multiple of 60). @default per alarm */
  readonly periodSeconds?: number;
  /** Which topic it notifies. @default per alarm */
  readonly severity?: AlarmSeverity;
}

/**
 * The alarms of the pipeline, each tunable or switchable. Thresholds compare with "greater than".
 * The README's "Alarms and runbooks" has one section per alarm.
 */
export interface PipelineAlarmsProps {
  // --- reputation ---------------------------------------------------------------------------
  /**
   * Complaint rate (`Reputation.ComplaintRate`, a fraction) at the warning level, well before SES's
   * review at 0.1 % (Gmail asks senders to stay under 0.1 % and never reach 0.3 %). Of the
   * configuration set the pipeline owns; of the account for a configuration set given by name.
   * @default page, threshold 0.0005 (0.05 %), 1 of 1 period of 900 s, missing data keeps the state
   */
  readonly sesComplaintRateWarning?: AlarmTuning;
  /**
   * Complaint rate at SES's review level (SES may pause the account at 0.5 %).
   * @default page, threshold 0.001 (0.1 %), 1 of 1 period of 900 s, missing data keeps the state
   */
  readonly sesComplaintRate?: AlarmTuning;
  /**
   * Bounce rate (`Reputation.BounceRate`, a fraction) at the warning level, before SES's review at 5 %.
   * @default page, threshold 0.02 (2 %), 1 of 1 period of 900 s, missing data keeps the state
   */
  readonly sesBounceRateWarning?: AlarmTuning;
  /**
   * Bounce rate at SES's review level (SES may pause the account at 10 %).
   * @default page, threshold 0.05 (5 %), 1 of 1 period of 900 s, missing data keeps the state
   */
  readonly sesBounceRate?: AlarmTuning;

  // --- mail stalled ----------------------------------------------------------------------------
  /**
   * The oldest retried message (`RetryAgeSeconds`, from when it first reached the queue) has been
   * retrying for an hour, for 15 minutes running: an outage of SES or the store, or sending held back.
   * @default page, threshold 3600 s, 3 of 3 periods of 300 s, statistic Maximum
   */
  readonly retriesStalled?: AlarmTuning;
  /**
   * The work queue holds more than half an hour of sending at maxSendRate, counting delayed copies
   * (retries travel as them) and messages in flight, for 15 minutes running.
   * @default page, threshold maxSendRate x 1800 messages, 3 of 3 periods of 300 s
   */
  readonly backlogTooLarge?: AlarmTuning;
  /**
   * The account cannot send (paused, suspended, daily quota), or this configuration set is paused.
   * @default page, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly systemicFailures?: AlarmTuning;
  /**
   * A function (send, ledger or status) was throttled for five minutes running: the account's or
   * the function's concurrency is used up.
   * @default page, threshold 0, 5 of 5 periods of 60 s, statistic Sum
   */
  readonly functionThrottles?: AlarmTuning;
  /**
   * Dead letters only the operator can fix (codes in OPERATOR_DEAD_LETTER_CODES: SES identity,
   * template, sandbox, retry budget exhausted): fix the cause, then redrive.
   * @default page, threshold 0 (any), 1 of 1 period of 300 s
   */
  readonly operatorDeadLetters?: AlarmTuning;
  /**
   * SNS gave up delivering email requests to the work queue and put them in the subscription's DLQ:
   * those emails never reached the pipeline.
   * @default page, threshold 0 (any arrival), 1 of 1 period of 300 s, statistic Sum
   */
  readonly subscriptionDeadLetters?: AlarmTuning;

  // --- duplicates and the ledger ---------------------------------------------------------------
  /**
   * A send whose outcome was unknown got no SES event within sendConfirmationGraceSeconds and was
   * sent again: the recipient may have two copies (SES events are best-effort).
   * @default page, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly unconfirmedResends?: AlarmTuning;
  /**
   * SES events wait in the ledger's buffer for longer than 15 minutes, for 15 minutes running:
   * statuses lag and unknown-fate sends cannot be confirmed (they are resent after the grace).
   * @default page, threshold 900 s, 3 of 3 periods of 300 s, statistic Maximum
   */
  readonly ledgerStalled?: AlarmTuning;
  /**
   * Emails were sent while the ledger recorded no SES event at all, for two 15-minute windows
   * running: the event destination, the events rule, the buffer or the ledger function is broken.
   * @default page, threshold 0 emails, 2 of 2 periods of 900 s
   */
  readonly ledgerSilent?: AlarmTuning;

  // --- warnings ----------------------------------------------------------------------------------
  /**
   * SES timed out, reset or answered 5xx: the ledger confirms most such sends from SES's own event
   * (`ConfirmedBySesEvent`) without resending. A duplicate is signalled by unconfirmedResends.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly ambiguousSends?: AlarmTuning;
  /**
   * The send function failed invocations (crash, timeout); the batch comes back after the visibility
   * timeout. Per-message failures are counted by the handler, not here.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly functionErrors?: AlarmTuning;
  /**
   * The ledger function failed invocations.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly ledgerFunctionErrors?: AlarmTuning;
  /**
   * The status function failed invocations (the function URL answered 5xx).
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly statusFunctionErrors?: AlarmTuning;
  /**
   * SES accepted an email but its completion could not be recorded within the invocation; a copy
   * arriving later is confirmed against the ledger before any resend.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly completionWriteFailures?: AlarmTuning;
  /**
   * SNS failed a delivery to the work queue (it retries; what it gives up on reaches the
   * subscription's DLQ, see subscriptionDeadLetters).
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly snsDeliveryFailures?: AlarmTuning;
  /**
   * New dead letters that are the publisher's fault (arrivals in the DLQ less the operator's codes):
   * only the publisher can fix them; never redrive them unchanged.
   * @default warn, threshold 0 (any arrival), 1 of 1 period of 300 s
   */
  readonly publisherDeadLetters?: AlarmTuning;
  /**
   * The oldest dead letter is 10 days old: SQS deletes it at 14 days.
   * @default warn, threshold DLQ retention less 4 days (864000 s), 1 of 1 period of 3600 s, statistic Maximum
   */
  readonly deadLetterAge?: AlarmTuning;
  /**
   * SES events the ledger function could not record are in the ledger's DLQ (moved there by the
   * buffer's redrive policy, which SQS does not count as arrivals: this watches the depth).
   * @default warn, threshold 0 (any visible message), 1 of 1 period of 300 s, statistic Maximum
   */
  readonly ledgerDeadLetters?: AlarmTuning;
  /**
   * SES events the ledger refused as not bound to a send of the pipeline (not recorded, so harmless
   * to statuses; someone may be planting evidence, or another sender shares the configuration set).
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s, statistic Sum
   */
  readonly ledgerUntrustedEvents?: AlarmTuning;
  /**
   * A retried message is older than the pipeline's retryingTooLongSeconds (from when it first
   * reached the queue, so a long backlog counts too).
   * @default warn, threshold retryingTooLongSeconds (900), 2 of 3 periods of 300 s, statistic Maximum
   */
  readonly retryingTooLong?: AlarmTuning;
  /**
   * DynamoDB throttled reads or writes of either table (idempotency records, ledger).
   * @default warn, threshold 0, 2 of 3 periods of 300 s
   */
  readonly tableThrottles?: AlarmTuning;
  /**
   * DynamoDB answered with system errors (HTTP 500) on either table.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s
   */
  readonly tableSystemErrors?: AlarmTuning;
  /**
   * SES accepted sends it then rejected (a virus) or could not render (a template and its data):
   * nothing was delivered, and no other metric shows it.
   * @default warn, threshold 0 (any), 1 of 1 period of 300 s
   */
  readonly sesRejects?: AlarmTuning;
}

/** The name of one alarm (a key of {@link PipelineAlarmsProps}). */
export type AlarmName = keyof PipelineAlarmsProps;

/** How one alarm behaves when not tuned. */
export interface AlarmDefaults {
  readonly severity: AlarmSeverity;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly periodSeconds: number;
  /** What a period without data counts as. */
  readonly treatMissingData: cw.TreatMissingData;
}
