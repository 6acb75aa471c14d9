/**
 * The metrics the alarms and the dashboard read: the handler's custom metrics (namespace and
 * `service` dimension of the pipeline's settings), SES's reputation and event counts, and the
 * expressions both build on (backlog with delayed copies, dead-letter arrivals by fault, a silent
 * ledger).
 */
import { Duration } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { CONFIRM_METRIC, LEDGER_METRIC, METRIC } from '../../../lambdas/kernel/names';
import type { EmailPipeline } from '../email-pipeline';
import { CONFIGURATION_SET_DIMENSION, SES_EVENT_METRIC } from '../ledger/events';

/** Metric names the handler publishes in `settings.metricsNamespace`, dimension `service`. */
export const HANDLER_METRICS = METRIC;

/**
 * The send function's confirm-before-resend counts (same namespace and
 * `service` dimension): a lost answer settled by the SES event, or sent again
 * after the grace period without one.
 */
export const LEDGER_METRICS = {
  confirmedBySesEvent: CONFIRM_METRIC.confirmedBySesEvent,
  unconfirmedResends: CONFIRM_METRIC.unconfirmedResends,
  /** Published by the ledger function (same namespace and service): events it refused as not the pipeline's own. */
  untrustedEvents: LEDGER_METRIC.untrustedEvents,
  /** Published by the ledger function: SES events written to the ledger table. */
  eventsRecorded: LEDGER_METRIC.eventsRecorded,
} as const;

/**
 * Dead-letter codes (`error-code`, the `reason` dimension of PermanentFailuresByReason) only the
 * operator can fix: the SES identity, a stored template, the account (sandbox recipients), or an
 * outage that outlasted the retry budget. The message itself is fine: fix the cause, then redrive.
 * Every other code is the publisher's (a message that breaks the contract, a key reused for other
 * content): redriving it fails the same way, or worse.
 */
export const OPERATOR_DEAD_LETTER_CODES = [
  'MailFromDomainNotVerifiedException',
  'NotFoundException',
  'MessageRejected',
  'RetryBudgetExhausted',
] as const;

/** The default period of the alarms' and the dashboard's metrics. */
export const FIVE_MINUTES = Duration.minutes(5);

/** A metric the pipeline's handler publishes, with the `service` dimension Powertools adds. */
export function handlerMetric(pipeline: EmailPipeline, metricName: string, options: cw.MetricOptions = {}): cw.Metric {
  return new cw.Metric({
    namespace: pipeline.settings.metricsNamespace,
    metricName,
    dimensionsMap: { service: pipeline.serviceName },
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
    ...options,
  });
}

/** An account-level SES metric. */
export function sesMetric(metricName: string, options: cw.MetricOptions = {}): cw.Metric {
  return new cw.Metric({
    namespace: 'AWS/SES',
    metricName,
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
    ...options,
  });
}

/** An SES event count of the pipeline's configuration set (its CloudWatch event destination). */
export function sesEventMetric(
  pipeline: EmailPipeline,
  metricName: (typeof SES_EVENT_METRIC)[keyof typeof SES_EVENT_METRIC],
  options: cw.MetricOptions = {},
): cw.Metric {
  return sesMetric(metricName, {
    dimensionsMap: { [CONFIGURATION_SET_DIMENSION]: pipeline.ledger.configurationSetName },
    ...options,
  });
}

/** Which reputation metrics the pipeline can watch. */
export type ReputationScope = 'configuration-set' | 'account';

/**
 * Where the reputation rates come from: the configuration set the pipeline owns publishes its own
 * (reputation metrics are on for it) besides the account's; a configuration set given by name may
 * not, so the account's rates (every sender of the account in the region) alone are watched.
 */
export function reputationScope(pipeline: EmailPipeline): ReputationScope {
  return pipeline.ledger.configurationSet !== undefined ? 'configuration-set' : 'account';
}

/** `Reputation.BounceRate` or `Reputation.ComplaintRate` (a fraction) of the account: no dimension. */
export function accountReputationMetric(
  which: 'BounceRate' | 'ComplaintRate',
  options: cw.MetricOptions = {},
): cw.Metric {
  return sesMetric(`Reputation.${which}`, { statistic: cw.Stats.MAXIMUM, ...options });
}

/**
 * `Reputation.BounceRate` or `Reputation.ComplaintRate` (a fraction) of the pipeline's own
 * configuration set, dimension `ses:configuration-set`. That dimension name is SES's auto-tag,
 * which no AWS document we found names for the reputation metrics: never alarm on this alone
 * (see {@link reputationMetric}).
 */
export function configurationSetReputationMetric(
  pipeline: EmailPipeline,
  which: 'BounceRate' | 'ComplaintRate',
  options: cw.MetricOptions = {},
): cw.Metric {
  return accountReputationMetric(which, {
    dimensionsMap: { [CONFIGURATION_SET_DIMENSION]: pipeline.ledger.configurationSetName },
    ...options,
  });
}

/**
 * The reputation rate the alarms and the first row read (a fraction). With a configuration set of
 * its own, the larger of the configuration set's rate and the account's (metric math MAX), so that
 * either crossing a threshold fires, and a dimension SES does not publish (the configuration set's
 * series then stays empty) cannot hide the account's rate, on which SES reviews and pauses the
 * account. With a configuration set given by name, the account's rate alone.
 */
export function reputationMetric(
  pipeline: EmailPipeline,
  which: 'BounceRate' | 'ComplaintRate',
  options: { readonly period?: Duration; readonly label?: string } = {},
): cw.IMetric {
  const period = options.period ?? FIVE_MINUTES;
  if (reputationScope(pipeline) === 'account') {
    return accountReputationMetric(which, { period, ...(options.label ? { label: options.label } : {}) });
  }
  return new cw.MathExpression({
    // Each series FILLed with 0: how MAX treats a timestamp where one series has no point is not
    // documented, and a configuration-set dimension SES does not publish must not hide the account's
    // rate. A period with neither reads 0 (below every threshold), so a breach still needs a real point.
    expression: `MAX([FILL(configurationSet${which}, 0), FILL(account${which}, 0)])`,
    usingMetrics: {
      [`configurationSet${which}`]: configurationSetReputationMetric(pipeline, which, { period }),
      [`account${which}`]: accountReputationMetric(which, { period }),
    },
    label: options.label ?? `${which} (the larger of the configuration set's and the account's)`,
    period,
  });
}

/**
 * Every message the queues hold (the work queue and the high-priority lane's): waiting, in flight,
 * and delayed. Retries travel as delayed copies, so during an outage the visible depth and the age
 * of the oldest message read near zero while thousands of emails wait as delayed copies.
 */
export function backlog(
  queues: readonly sqs.IQueue[],
  options: { label?: string; period?: Duration } = {},
): cw.MathExpression {
  const max = { statistic: cw.Stats.MAXIMUM };
  const usingMetrics: Record<string, cw.IMetric> = {};
  queues.forEach((queue, i) => {
    usingMetrics[`visible${i}`] = queue.metricApproximateNumberOfMessagesVisible(max);
    usingMetrics[`delayed${i}`] = queue.metric('ApproximateNumberOfMessagesDelayed', max);
    usingMetrics[`inFlight${i}`] = queue.metricApproximateNumberOfMessagesNotVisible(max);
  });
  return new cw.MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    label: options.label ?? 'Backlog (waiting + delayed + in flight)',
    period: options.period ?? FIVE_MINUTES,
  });
}

/**
 * Messages that arrived in a queue by SendMessage (`NumberOfMessagesSent`): the send function
 * dead-letters with SendMessage, and SNS sends to the subscription's DLQ. Messages a redrive
 * policy moves (past maxReceiveCount) are not counted by SQS.
 */
export function arrivals(queue: sqs.IQueue, options: cw.MetricOptions = {}): cw.Metric {
  return queue.metricNumberOfMessagesSent({ statistic: cw.Stats.SUM, period: FIVE_MINUTES, ...options });
}

/** Dead letters of the codes in {@link OPERATOR_DEAD_LETTER_CODES}: the operator's to fix. */
export function operatorDeadLetters(pipeline: EmailPipeline, period: Duration = FIVE_MINUTES): cw.MathExpression {
  const usingMetrics = operatorReasonMetrics(pipeline);
  return new cw.MathExpression({
    expression: `SUM([${Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(', ')}])`,
    usingMetrics,
    label: "Dead letters, operator's fault",
    period,
  });
}

/**
 * Dead letters that are the publisher's fault: arrivals in the DLQ less the operator's codes. A
 * code the alarms do not know counts as the publisher's (it warns rather than pages).
 */
export function publisherDeadLetters(pipeline: EmailPipeline, period: Duration = FIVE_MINUTES): cw.MathExpression {
  const usingMetrics = operatorReasonMetrics(pipeline);
  return new cw.MathExpression({
    expression: `FILL(arrived, 0) - SUM([${Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(', ')}])`,
    usingMetrics: { arrived: arrivals(pipeline.deadLetterQueue), ...usingMetrics },
    label: "Dead letters, publisher's fault",
    period,
  });
}

function operatorReasonMetrics(pipeline: EmailPipeline): Record<string, cw.IMetric> {
  return Object.fromEntries(
    OPERATOR_DEAD_LETTER_CODES.map((code, i) => [
      `operator${i}`,
      new cw.Metric({
        namespace: pipeline.settings.metricsNamespace,
        metricName: HANDLER_METRICS.permanentFailuresByReason,
        dimensionsMap: { service: pipeline.serviceName, reason: code },
        statistic: cw.Stats.SUM,
        period: FIVE_MINUTES,
      }),
    ]),
  );
}

/**
 * Emails the send function sent in a period in which the ledger recorded no SES event at all: the
 * event destination, the events rule, the buffer or the ledger function is broken, and every
 * unknown-fate send of that time will be resent after the grace.
 */
export function silentLedger(pipeline: EmailPipeline, period: Duration): cw.MathExpression {
  return new cw.MathExpression({
    expression: 'IF(FILL(recorded, 0) == 0, FILL(sent, 0), 0)',
    usingMetrics: {
      sent: handlerMetric(pipeline, HANDLER_METRICS.emailsSent),
      recorded: handlerMetric(pipeline, LEDGER_METRICS.eventsRecorded),
    },
    label: 'Emails sent with no SES event recorded',
    period,
  });
}

/** Throttles of the pipeline's three functions (send, ledger, status) together. */
export function functionThrottles(pipeline: EmailPipeline, period: Duration): cw.MathExpression {
  const sum = { statistic: cw.Stats.SUM };
  return new cw.MathExpression({
    expression: 'FILL(send, 0) + FILL(ledger, 0) + FILL(status, 0)',
    usingMetrics: {
      send: pipeline.sendFunction.metricThrottles(sum),
      ledger: pipeline.ledger.ledgerFunction.metricThrottles(sum),
      status: pipeline.ledger.statusFunction.metricThrottles(sum),
    },
    label: 'Throttled invocations (send, ledger, status)',
    period,
  });
}

/** Throttled reads and writes of both tables (idempotency records, send ledger). */
export function tableThrottles(pipeline: EmailPipeline, period: Duration): cw.MathExpression {
  const sum = { statistic: cw.Stats.SUM };
  return new cw.MathExpression({
    expression: 'FILL(claimsRead, 0) + FILL(claimsWrite, 0) + FILL(ledgerRead, 0) + FILL(ledgerWrite, 0)',
    usingMetrics: {
      claimsRead: pipeline.table.metric('ReadThrottleEvents', sum),
      claimsWrite: pipeline.table.metric('WriteThrottleEvents', sum),
      ledgerRead: pipeline.ledger.table.metric('ReadThrottleEvents', sum),
      ledgerWrite: pipeline.ledger.table.metric('WriteThrottleEvents', sum),
    },
    label: 'Throttled table requests (idempotency, ledger)',
    period,
  });
}

/** The item operations the functions use, for DynamoDB's per-operation metrics. */
export const TABLE_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'GetItem'] as const;

/** DynamoDB system errors (HTTP 500) of both tables, over the item operations. */
export function tableSystemErrors(pipeline: EmailPipeline, period: Duration): cw.MathExpression {
  const usingMetrics: Record<string, cw.IMetric> = {};
  for (const [name, table] of [
    ['claims', pipeline.table],
    ['ledger', pipeline.ledger.table],
  ] as const) {
    TABLE_OPERATIONS.forEach((operation, i) => {
      usingMetrics[`${name}${i}`] = new cw.Metric({
        namespace: 'AWS/DynamoDB',
        metricName: 'SystemErrors',
        dimensionsMap: { TableName: table.tableName, Operation: operation },
        statistic: cw.Stats.SUM,
      });
    });
  }
  return new cw.MathExpression({
    expression: `SUM([${Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(', ')}])`,
    usingMetrics,
    label: 'DynamoDB system errors (idempotency, ledger)',
    period,
  });
}

/** SES events after acceptance that mean nothing was delivered: Reject (virus) and Rendering Failure (template). */
export function rejectedOrUnrendered(pipeline: EmailPipeline, period: Duration): cw.MathExpression {
  return new cw.MathExpression({
    expression: 'FILL(rejected, 0) + FILL(unrendered, 0)',
    usingMetrics: {
      rejected: sesEventMetric(pipeline, SES_EVENT_METRIC.reject),
      unrendered: sesEventMetric(pipeline, SES_EVENT_METRIC.renderingFailure),
    },
    label: 'Rejected or not rendered (this configuration set)',
    period,
  });
}
