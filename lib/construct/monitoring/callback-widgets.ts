/**
 * The dashboard's callbacks row, only for a pipeline with callbacks: what the callback function
 * delivered, retried, gave up on and disabled (its Powertools metrics, under the pipeline's
 * namespace and `service`), how long status changes wait in the callbacks queue, how many
 * callbacks are in its DLQ, and the function's own health.
 */
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { CALLBACK_METRIC } from '../../../lambdas/kernel/callbacks/names';
import type { EmailPipeline } from '../email-pipeline';
import { graph, section, type ThresholdLine } from './dashboard-widgets';
import { handlerMetric } from './metrics';

/** The callbacks' section; none without callbacks. */
export function callbackWidgets(p: EmailPipeline, line: ThresholdLine): cw.IWidget[] {
  const callbacks = p.callbacks;
  if (callbacks === undefined) return [];
  const m = (name: string, label: string) => handlerMetric(p, name, { label });
  const fn = callbacks.callbackFunction;
  return [
    section('10. Callbacks: status changes POSTed to the publishers'),
    graph(
      'Callbacks delivered, retried, failed',
      'Count',
      6,
      [
        m(CALLBACK_METRIC.delivered, 'Delivered'),
        m(CALLBACK_METRIC.retried, 'Retries'),
        m(CALLBACK_METRIC.failed, 'Failed (to the DLQ)'),
        m(CALLBACK_METRIC.disabled, 'Disabled by a 410'),
      ],
      line('callbacksDisabled'),
    ),
    graph(
      'Callbacks queue: oldest status change waiting',
      'Seconds',
      6,
      [callbacks.queue.metricApproximateAgeOfOldestMessage({ label: 'Oldest message', statistic: cw.Stats.MAXIMUM })],
      line('callbacksLate'),
    ),
    graph(
      'Callbacks DLQ depth',
      'Messages',
      6,
      [
        callbacks.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          label: 'In the callbacks DLQ',
          statistic: cw.Stats.MAXIMUM,
        }),
      ],
      line('callbackDeadLetters'),
    ),
    graph(
      'Callback function: invocations, errors, throttles',
      'Count',
      6,
      [
        fn.metricInvocations({ label: 'Invocations', statistic: cw.Stats.SUM }),
        fn.metricErrors({ label: 'Errors', statistic: cw.Stats.SUM }),
        fn.metricThrottles({ label: 'Throttles', statistic: cw.Stats.SUM }),
      ],
      [],
      [
        handlerMetric(p, CALLBACK_METRIC.deliveryAge, {
          label: 'Age at delivery, p99 (s, right)',
          statistic: cw.Stats.p(99),
        }),
      ],
    ),
  ];
}
