/**
 * The metrics the alarms and the dashboard read: the handler's custom metrics (namespace and
 * `service` dimension of the pipeline's settings) and SES's account-level ones.
 */
import { Duration } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { CONFIRM_METRIC, LEDGER_METRIC, METRIC } from '../../../lambdas/kernel/names';
import type { EmailPipeline } from '../email-pipeline';

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
} as const;

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
