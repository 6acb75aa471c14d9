/**
 * The alarms that warn by default (the warning topic): what the pipeline settles by itself or what
 * can wait for working hours. Each is declared once here; alarm-catalog.ts gathers them.
 * `npm run docs:alarms` writes each one's row of the alarm table and `#### Alarm: <name>` runbook
 * heading in docs/operators.md; the runbook's prose is written by hand.
 */
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { CALLBACK_METRIC } from '../../../lambdas/kernel/callbacks/names';
import { SQS_MAX_DELAY_SECONDS } from '../../../lambdas/kernel/sqs-limits';
import { DLQ_RETENTION_SECONDS } from '../../settings';
import { ruleMatches } from '../pipeline/tenant-status';
import { onAny, type AlarmDeclaration } from './alarm-declaration';
import {
  HANDLER_METRICS,
  LEDGER_METRICS,
  handlerMetric,
  publisherDeadLetters,
  rejectedOrUnrendered,
  tableSystemErrors,
  tableThrottles,
} from './metrics';

const DAY = 24 * 60 * 60;

/** How much longer than one hop a copy may wait in the schedule queue before scheduledMailLate warns. */
export const SCHEDULE_LATE_MARGIN_SECONDS = 300;

/** How old the oldest callback waiting in the callbacks queue may be before callbacksLate warns. */
export const CALLBACKS_LATE_SECONDS = 60 * 60;

/** How long before the DLQ deletes a message the deadLetterAge alarm warns. */
export const DEAD_LETTER_AGE_MARGIN_SECONDS = 4 * DAY;

const sum = cw.Stats.SUM;
const max = cw.Stats.MAXIMUM;

export const WARNING_ALARMS = {
  ambiguousSends: {
    ...onAny('warn'),
    watches: '`AmbiguousSends`',
    summary: 'SES timed out, reset or answered 5xx; the ledger confirms most such sends without resending',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.ambiguousSends, { period }),
    description: () =>
      'SES timed out, reset or answered 5xx: the ledger confirms such sends from their SES event without resending (ConfirmedBySesEvent). Only UnconfirmedResends may be duplicates. Watch SES latency and errors.',
  },
  functionErrors: {
    ...onAny('warn'),
    watches: 'send function `Errors`',
    summary: 'the send function failed invocations; the batch comes back after the visibility timeout',
    metric: (p, period) => p.sendFunction.metricErrors({ period, statistic: sum }),
    description: () =>
      'The send function failed invocations (crash or timeout); the batch comes back after the visibility timeout. Read its log group.',
  },
  ledgerFunctionErrors: {
    ...onAny('warn'),
    watches: 'ledger function `Errors`',
    summary: 'the ledger function failed invocations; its events come back from the buffer',
    metric: (p, period) => p.ledger.ledgerFunction.metricErrors({ period, statistic: sum }),
    description: () =>
      'The ledger function failed invocations; its events come back from the buffer. Read its log group.',
  },
  statusFunctionErrors: {
    ...onAny('warn'),
    watches: 'status function `Errors`',
    summary: 'the status function failed invocations: status lookups answered 5xx',
    metric: (p, period) => p.ledger.statusFunction.metricErrors({ period, statistic: sum }),
    description: () => 'The status function failed invocations: status lookups answered 5xx. Read its log group.',
  },
  completionWriteFailures: {
    ...onAny('warn'),
    watches: '`CompletionWriteFailures`',
    summary: 'SES accepted an email whose completion the store never recorded',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.completionWriteFailures, { period }),
    description: () =>
      'SES accepted emails whose completion the idempotency store never recorded; a later copy is confirmed against the ledger before any resend. Check DynamoDB.',
  },
  snsDeliveryFailures: {
    ...onAny('warn'),
    watches: 'topic `NumberOfNotificationsFailed`',
    summary: "SNS failed a delivery to a queue (it retries; what it gives up on reaches the subscription's DLQ)",
    // Both topics: each delivers to its own queue.
    metric: (p, period) =>
      new cw.MathExpression({
        expression: 'FILL(normal, 0) + FILL(high, 0)',
        usingMetrics: {
          normal: p.topic.metricNumberOfNotificationsFailed({ period, statistic: sum }),
          high: p.highPriorityTopic.metricNumberOfNotificationsFailed({ period, statistic: sum }),
        },
        period,
        label: 'Failed deliveries of both topics',
      }),
    description: () =>
      "SNS failed deliveries to the work queue or the high-priority queue (it retries; what it gives up on lands in the subscription's DLQ). Check the queue policy and key.",
  },
  publisherDeadLetters: {
    ...onAny('warn'),
    watches: 'DLQ `NumberOfMessagesSent` less operator codes',
    summary: "new dead letters that are the publisher's fault: never redrive them unchanged",
    metric: (p, period) => publisherDeadLetters(p, period),
    description: () =>
      'New dead letters that are the publisher\'s fault (contract, envelope, key reused with other content): tell the publisher; never redrive them unchanged. "email-pipeline dlq list" shows codes and keys.',
  },
  deadLetterAge: {
    ...onAny('warn'),
    threshold: DLQ_RETENTION_SECONDS - DEAD_LETTER_AGE_MARGIN_SECONDS,
    unit: 'seconds',
    periodSeconds: 3600,
    watches: 'DLQ `ApproximateAgeOfOldestMessage`',
    thresholdText: `${(DLQ_RETENTION_SECONDS - DEAD_LETTER_AGE_MARGIN_SECONDS) / DAY} days`,
    summary: `the oldest dead letter is near the DLQ's retention (${DLQ_RETENTION_SECONDS / DAY} days)`,
    metric: (p, period) => p.deadLetterQueue.metricApproximateAgeOfOldestMessage({ period, statistic: max }),
    description: (_p, t) =>
      `A dead letter is ${Math.round(t.threshold / DAY)} days old; SQS deletes it at ${Math.round(DLQ_RETENTION_SECONDS / DAY)} days. Redrive or delete it.`,
  },
  ledgerDeadLetters: {
    ...onAny('warn'),
    watches: 'ledger DLQ `ApproximateNumberOfMessagesVisible`',
    summary: "SES events the ledger function could not record are in the ledger's DLQ",
    metric: (p, period) =>
      p.ledger.bufferDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: max }),
    description: () =>
      'SES events the ledger function could not record are in the ledger DLQ: statuses of those keys lag. Read the ledger log group, then redrive or purge the ledger DLQ.',
  },
  ledgerUntrustedEvents: {
    ...onAny('warn'),
    watches: '`LedgerUntrustedEvents`',
    summary: 'the ledger refused SES events not bound to a send of the pipeline',
    metric: (p, period) => handlerMetric(p, LEDGER_METRICS.untrustedEvents, { period }),
    description: () =>
      'The ledger refused SES events not bound to a send of the pipeline (not recorded). The ledger logs each with key and reason: an event whose caller identity or configuration set is not the pipeline’s (run email-pipeline verify), or one put in the buffer by someone its policy should have refused.',
  },
  retryingTooLong: {
    ...onAny('warn'),
    threshold: (settings) => settings.retryingTooLongSeconds,
    unit: 'seconds',
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    watches: '`RetryAgeSeconds` (max)',
    thresholdText: '`retryingTooLongSeconds`',
    summary: 'a retried message first reached the queue longer ago than `retryingTooLongSeconds`',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.retryAge, { period, statistic: max }),
    description: (p, t) =>
      `A retried message reached the queue more than ${t.threshold} s ago (retryingTooLongSeconds; a long backlog counts too). It is sent once the cause passes, or dead-lettered after ${p.settings.retryBudgetSeconds} s.`,
  },
  tableThrottles: {
    ...onAny('warn'),
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    watches: '`Read`/`WriteThrottleEvents`, both tables',
    summary: 'DynamoDB throttled reads or writes of the idempotency or ledger table',
    metric: (p, period) => tableThrottles(p, period),
    description: () =>
      'DynamoDB throttled the idempotency or ledger table: sends retry (fail-closed). Check capacity and hot keys.',
  },
  tableSystemErrors: {
    ...onAny('warn'),
    watches: '`SystemErrors`, both tables',
    summary: 'DynamoDB answered with system errors on either table',
    metric: (p, period) => tableSystemErrors(p, period),
    description: () =>
      'DynamoDB answered with system errors on the idempotency or ledger table: sends retry. Check the AWS Health Dashboard.',
  },
  sesRejects: {
    ...onAny('warn'),
    watches: '`Reject` + `Rendering Failure` (configuration set)',
    summary: 'SES accepted sends it then rejected (a virus) or could not render: nothing was delivered',
    metric: (p, period) => rejectedOrUnrendered(p, period),
    description: () =>
      'SES accepted sends, then rejected them (virus) or could not render their template: nothing was delivered. Check the template and its data.',
  },
  rateLeaseRepairs: {
    ...onAny('warn'),
    watches: '`RateLeaseRepairs`',
    summary: 'a rate lease item held a value no lease writes and was repaired; sending went on at the static share',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.rateLeaseRepairs, { period }),
    description: () =>
      'A lane\'s shared rate lease item held a value no lease writes (far ahead, below zero, not a number) and was replaced; meanwhile that container sent at its static share. Read the send log group ("rate lease item implausible") and find who wrote the item (CloudTrail, the idempotency table).',
  },
  cancelFunctionErrors: {
    ...onAny('warn'),
    watches: 'cancel function `Errors`',
    summary: 'the cancel function failed invocations: cancels answered 5xx and cancelled nothing',
    metric: (p, period) => p.ledger.cancelFunction.metricErrors({ period, statistic: sum }),
    description: () =>
      'The cancel function failed invocations: DELETE /deliveries/{key} answered 5xx and those keys were not cancelled. Read the status log group (the cancel function logs there), then cancel again.',
  },
  scheduleFunctionErrors: {
    ...onAny('warn'),
    watches: 'schedule function `Errors`',
    summary: 'the schedule function failed invocations; its copies come back from the schedule queue',
    metric: (p, period) => p.scheduleFunction.metricErrors({ period, statistic: sum }),
    description: () =>
      'The schedule function failed invocations; its batch comes back from the schedule queue after the visibility timeout, and a copy that fails every receive reaches the DLQ. Read the send log group (the schedule function logs there).',
  },
  scheduledMailLate: {
    ...onAny('warn'),
    threshold: SQS_MAX_DELAY_SECONDS + SCHEDULE_LATE_MARGIN_SECONDS,
    unit: 'seconds',
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    watches: 'schedule queue `ApproximateAgeOfOldestMessage`',
    thresholdText: `${SQS_MAX_DELAY_SECONDS + SCHEDULE_LATE_MARGIN_SECONDS} s (one hop of ${SQS_MAX_DELAY_SECONDS} s and ${SCHEDULE_LATE_MARGIN_SECONDS} s)`,
    summary:
      'a scheduled copy has waited longer than one hop: the schedule function is not moving copies, and mail comes late',
    metric: (p, period) => p.scheduleQueue.metricApproximateAgeOfOldestMessage({ period, statistic: max }),
    description: (_p, t) =>
      `A copy in the schedule queue is over ${t.threshold} s old: no hop waits that long, so the schedule function is not moving copies (errors, throttles, a disabled mapping) and scheduled mail will be late, never early. Check the schedule function's errors and its mapping.`,
  },
  callbackDeadLetters: {
    ...onAny('warn'),
    requires: 'callbacks',
    watches: 'callbacks DLQ `ApproximateNumberOfMessagesVisible`',
    summary: 'callbacks that will not be delivered wait in the callbacks DLQ',
    metric: (p, period) =>
      p.callbacks!.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: max }),
    description: () =>
      'Callbacks are in the callbacks DLQ: a receiver refused them (4xx), did not answer within the retry window, or its callback is disabled. "email-pipeline callbacks list" shows each with its reason; fix the receiver, then "email-pipeline callbacks redrive".',
  },
  callbacksLate: {
    ...onAny('warn'),
    requires: 'callbacks',
    threshold: CALLBACKS_LATE_SECONDS,
    unit: 'seconds',
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    watches: 'callbacks queue `ApproximateAgeOfOldestMessage`',
    summary: 'a status change has waited over an hour for its callback',
    metric: (p, period) => p.callbacks!.queue.metricApproximateAgeOfOldestMessage({ period, statistic: max }),
    description: (_p, t) =>
      `A status change has waited in the callbacks queue for over ${t.threshold} s: callbacks are late. Check the callback function's errors, throttles and mapping, and whether a receiver is slow (its log group).`,
  },
  callbacksDisabled: {
    ...onAny('warn'),
    requires: 'callbacks',
    watches: '`CallbacksDisabled`',
    summary: "a receiver answered 410 Gone: its team's callback is disabled",
    metric: (p, period) => handlerMetric(p, CALLBACK_METRIC.disabled, { period }),
    description: () =>
      'A receiver answered 410 Gone, which disabled its team\'s callback: its status changes now go to the callbacks DLQ. Once the receiver is fixed, "email-pipeline callbacks enable --team <team>", then redrive the DLQ.',
  },
  sesTenantPaused: {
    ...onAny('warn'),
    requires: 'tenants',
    watches: "the tenants' `Sending Status Disabled` rule `TriggeredRules`",
    summary: "SES disabled sending for a team's SES tenant: that team's mail waits, the other teams' goes on",
    metric: (p, period) => ruleMatches(p.tenantStatus!.rules.paused, { period }),
    description: (p) =>
      `SES disabled sending for a team's SES tenant (its reputation policy tripped, or someone disabled it): SES refuses that team's sends, the other teams send on. "email-pipeline verify" shows each tenant's status; the event itself is in the log group ${p.logGroupNames.tenantStatus ?? "of the tenants' status"}.`,
  },
} satisfies Record<string, AlarmDeclaration>;
