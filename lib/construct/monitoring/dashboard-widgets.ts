/**
 * The dashboard's widgets by section: the first row of figures at a glance, reputation on its own
 * axes, the ledger's and the status function's health, deliveries, brown-outs; and the small
 * helpers they share (section headers, graphs with threshold lines).
 */
import { Duration } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { LANE_METRIC } from '../../../lambdas/kernel/names';
import type { EmailPipeline } from '../email-pipeline';
import { SES_EVENT_METRIC } from '../ledger/events';
import type { AlarmName } from './alarms';
import {
  FIVE_MINUTES,
  HANDLER_METRICS,
  LEDGER_METRICS,
  arrivals,
  backlog,
  handlerMetric,
  accountReputationMetric,
  configurationSetReputationMetric,
  reputationMetric,
  reputationScope,
  sesEventMetric,
  sesMetric,
} from './metrics';

/** The labels of the first row's figures, in order (the README and the tests read them). */
export const AT_A_GLANCE = [
  'Sent per minute',
  'Backlog (incl. delayed)',
  'Oldest retry (s)',
  'Dead letters (last hour)',
  'Bounce rate (%)',
  'Complaint rate (%)',
  'Ledger lag (s)',
] as const;

export type ThresholdLine = (name: AlarmName, label?: string) => cw.HorizontalAnnotation[];

/**
 * The first row: one figure each, in the order of {@link AT_A_GLANCE}. Rates are the latest
 * reputation value; dead letters count the last hour's arrivals.
 */
export function atAGlance(p: EmailPipeline): cw.SingleValueWidget {
  const [sent, queued, retry, deadLetters, bounce, complaint, ledgerLag] = AT_A_GLANCE;
  return new cw.SingleValueWidget({
    title: 'At a glance',
    width: 24,
    height: 3,
    metrics: [
      new cw.MathExpression({
        expression: 'FILL(sent, 0) / (PERIOD(sent) / 60)',
        usingMetrics: { sent: handlerMetric(p, HANDLER_METRICS.emailsSent) },
        label: sent,
        period: FIVE_MINUTES,
      }),
      backlog([p.queue, p.highPriorityQueue], { label: queued }),
      handlerMetric(p, HANDLER_METRICS.retryAge, { label: retry, statistic: cw.Stats.MAXIMUM }),
      arrivals(p.deadLetterQueue, { label: deadLetters, period: Duration.hours(1) }),
      percentOf(reputationMetric(p, 'BounceRate'), bounce, 'bounceRate'),
      percentOf(reputationMetric(p, 'ComplaintRate'), complaint, 'complaintRate'),
      p.ledger.bufferQueue.metricApproximateAgeOfOldestMessage({ label: ledgerLag, statistic: cw.Stats.MAXIMUM }),
    ],
  });
}

/**
 * Whether sending has stopped: 1 while messages wait in either lane's queue and the send function is not
 * invoked (paused with `email-pipeline pause`, whose disabled event source mappings CloudWatch has no
 * metric for, or stuck), else 0. `email-pipeline pause --status` says which.
 */
export function sendingStopped(p: EmailPipeline): cw.SingleValueWidget {
  return new cw.SingleValueWidget({
    title: 'Sending stopped? (1: mail waits and the send function is not invoked: paused or stuck)',
    width: 24,
    height: 3,
    metrics: [
      new cw.MathExpression({
        // Mail waiting in either lane: the high-priority queue has its own mapping, paused with the other.
        expression: 'IF(FILL(waiting, 0) + FILL(waitingHigh, 0) > 0 AND FILL(invocations, 0) == 0, 1, 0)',
        usingMetrics: {
          waiting: p.queue.metricApproximateNumberOfMessagesVisible({ statistic: cw.Stats.MAXIMUM }),
          waitingHigh: p.highPriorityQueue.metricApproximateNumberOfMessagesVisible({ statistic: cw.Stats.MAXIMUM }),
          invocations: p.sendFunction.metricInvocations({ statistic: cw.Stats.SUM }),
        },
        label: 'Sending stopped (paused or stuck)',
        period: FIVE_MINUTES,
      }),
    ],
  });
}

/** `100 * rate`; `id` names the rate in the expression (unique within one widget). */
export function percentOf(rate: cw.IMetric, label: string, id: string): cw.MathExpression {
  return new cw.MathExpression({
    expression: `100 * ${id}`,
    usingMetrics: { [id]: rate },
    label,
    period: FIVE_MINUTES,
  });
}

/** 6. Reputation on its own axes (bounce and complaint apart, each with its alarm levels), and the account's counts. */
export function reputationWidgets(p: EmailPipeline, line: ThresholdLine): cw.IWidget[] {
  const scope = reputationScope(p);
  const whose = scope === 'configuration-set' ? `configuration set ${p.ledger.configurationSetName}` : 'the account';
  const percentLines = (names: AlarmName[]) =>
    names.flatMap((name) => line(name).map((a) => ({ ...a, value: +(a.value * 100).toFixed(4) })));
  const rateGraph = (which: 'BounceRate' | 'ComplaintRate', title: string, names: AlarmName[]) => {
    // Both series, labelled: the alarms fire on the larger of the two (metrics.ts, reputationMetric).
    const rates =
      scope === 'configuration-set'
        ? [
            percentOf(configurationSetReputationMetric(p, which), `${title} of ${whose}`, 'rate'),
            percentOf(accountReputationMetric(which), `${title} of the account`, 'accountRate'),
          ]
        : [percentOf(accountReputationMetric(which), `${title} of the account`, 'accountRate')];
    return graph(`${title} (%)`, 'Percent', 8, rates, percentLines(names));
  };
  return [
    section(`6. SES reputation (${whose}) and the account`),
    rateGraph('BounceRate', 'Bounce rate', ['sesBounceRateWarning', 'sesBounceRate']),
    rateGraph('ComplaintRate', 'Complaint rate', ['sesComplaintRateWarning', 'sesComplaintRate']),
    graph('Account: sends, bounces, complaints (every sender in the region)', 'Count', 8, [
      sesMetric('Send', { label: 'Send' }),
      sesMetric('Bounce', { label: 'Bounce' }),
      sesMetric('Complaint', { label: 'Complaint' }),
    ]),
  ];
}

/** 8. The ledger's health: lag, events recorded against emails sent, the function, its DLQ. */
export function ledgerWidgets(p: EmailPipeline, line: ThresholdLine): cw.IWidget[] {
  const { ledger } = p;
  const fn = ledger.ledgerFunction;
  return [
    section('8. Ledger: buffer, ledger function, ledger table'),
    graph(
      'Ledger lag: oldest SES event in the buffer',
      'Seconds',
      6,
      [ledger.bufferQueue.metricApproximateAgeOfOldestMessage({ label: 'Oldest event', statistic: cw.Stats.MAXIMUM })],
      line('ledgerStalled'),
    ),
    graph('Events recorded vs emails sent', 'Count', 6, [
      handlerMetric(p, HANDLER_METRICS.emailsSent, { label: 'Emails sent' }),
      handlerMetric(p, LEDGER_METRICS.eventsRecorded, { label: 'SES events recorded' }),
    ]),
    graph('Ledger function: invocations, errors, throttles', 'Count', 6, [
      fn.metricInvocations({ label: 'Invocations', statistic: cw.Stats.SUM }),
      fn.metricErrors({ label: 'Errors', statistic: cw.Stats.SUM }),
      fn.metricThrottles({ label: 'Throttles', statistic: cw.Stats.SUM }),
      ledger.bufferDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        label: 'Events in the ledger DLQ',
        statistic: cw.Stats.MAXIMUM,
      }),
    ]),
    graph('Ledger function duration', 'Milliseconds', 6, [
      fn.metricDuration({ label: 'p50', statistic: cw.Stats.p(50) }),
      fn.metricDuration({ label: 'p99', statistic: cw.Stats.p(99) }),
      fn.metricDuration({ label: 'Maximum', statistic: cw.Stats.MAXIMUM }),
    ]),
  ];
}

/** 9. The status function behind the function URL. */
export function statusWidgets(p: EmailPipeline): cw.IWidget[] {
  const fn = p.ledger.statusFunction;
  return [
    section('9. Status: the status function (GET /deliveries/{key})'),
    graph('Status lookups: invocations, errors, throttles', 'Count', 12, [
      fn.metricInvocations({ label: 'Invocations', statistic: cw.Stats.SUM }),
      fn.metricErrors({ label: 'Errors', statistic: cw.Stats.SUM }),
      fn.metricThrottles({ label: 'Throttles', statistic: cw.Stats.SUM }),
    ]),
    graph('Status lookup duration', 'Milliseconds', 12, [
      fn.metricDuration({ label: 'p50', statistic: cw.Stats.p(50) }),
      fn.metricDuration({ label: 'p99', statistic: cw.Stats.p(99) }),
    ]),
  ];
}

/** 7. Deliveries: what SES reported for this pipeline's configuration set, confirmations, and the ledger's health. */
export function addDeliveriesSection(dashboard: cw.Dashboard, pipeline: EmailPipeline): void {
  const { ledger } = pipeline;
  const byConfigurationSet = (metricName: (typeof SES_EVENT_METRIC)[keyof typeof SES_EVENT_METRIC], label: string) =>
    sesEventMetric(pipeline, metricName, { label });
  const m = (name: string, label: string) => handlerMetric(pipeline, name, { label });
  dashboard.addWidgets(
    section(`7. Deliveries: send ledger (configuration set ${ledger.configurationSetName})`),
    graph('Delivered, bounced, complained', 'Count', 6, [
      byConfigurationSet(SES_EVENT_METRIC.delivery, 'Delivered'),
      byConfigurationSet(SES_EVENT_METRIC.bounce, 'Bounced'),
      byConfigurationSet(SES_EVENT_METRIC.complaint, 'Complained'),
    ]),
    graph('Accepted, then not delivered: rejected or not rendered', 'Count', 6, [
      byConfigurationSet(SES_EVENT_METRIC.reject, 'Rejected (virus)'),
      byConfigurationSet(SES_EVENT_METRIC.renderingFailure, 'Rendering failure (template)'),
    ]),
    graph('Unknown-fate sends', 'Count', 6, [
      m(LEDGER_METRICS.confirmedBySesEvent, 'Confirmed by SES event (not resent)'),
      m(LEDGER_METRICS.unconfirmedResends, 'Unconfirmed resends'),
      m(LEDGER_METRICS.untrustedEvents, 'SES events refused (not bound to a send)'),
    ]),
    graph('Ledger: events waiting and dead-lettered', 'Messages', 6, [
      ledger.bufferQueue.metricApproximateNumberOfMessagesVisible({
        label: 'Events waiting',
        statistic: cw.Stats.MAXIMUM,
      }),
      ledger.bufferDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        label: 'Events in the ledger DLQ',
        statistic: cw.Stats.MAXIMUM,
      }),
      ledger.ledgerFunction.metricErrors({ label: 'Ledger function errors', statistic: cw.Stats.SUM }),
    ]),
  );
}

/** Sends per second against maxSendRate, throttles and held sends, and how long retries run. */
export function brownOutWidgets(pipeline: EmailPipeline, line: ThresholdLine): cw.IWidget[] {
  const { settings } = pipeline;
  const perMinute = Duration.minutes(1);
  const m = (name: string, label: string, statistic: string = cw.Stats.SUM) =>
    handlerMetric(pipeline, name, { label, statistic, period: perMinute });
  return [
    section('5b. Brown-outs: send pacing, circuit breaker, retry budget'),
    new cw.GraphWidget({
      title: `Sends per second (maxSendRate ${settings.maxSendRate}/s)`,
      left: [
        new cw.MathExpression({
          expression: 'sent / PERIOD(sent)',
          usingMetrics: { sent: m(HANDLER_METRICS.emailsSent, 'Emails sent') },
          label: 'Emails sent per second',
          period: perMinute,
        }),
      ],
      leftAnnotations: [{ value: settings.maxSendRate, label: 'maxSendRate' }],
      width: 8,
      height: 6,
      leftYAxis: { label: 'Per second', showUnits: false, min: 0 },
    }),
    graph('Throttles and sends held back', 'Count', 8, [
      m(HANDLER_METRICS.sesThrottles, 'SES throttles (429)'),
      m(HANDLER_METRICS.sendsHeldByBreaker, 'Held by the circuit breaker'),
      m(HANDLER_METRICS.sendsPastDeadline, 'No send slot before the deadline'),
      m(HANDLER_METRICS.retryBudgetExhausted, 'Retry budget exhausted (to DLQ)'),
    ]),
    new cw.GraphWidget({
      title: 'Age of retried messages',
      left: [m(HANDLER_METRICS.retryAge, 'Oldest retried message', cw.Stats.MAXIMUM)],
      leftAnnotations: [...line('retryingTooLong'), ...line('retriesStalled')],
      width: 8,
      height: 6,
      leftYAxis: { label: 'Seconds', showUnits: false, min: 0 },
    }),
  ];
}

export function section(title: string): cw.TextWidget {
  return new cw.TextWidget({ markdown: `## ${title}`, width: 24, height: 1 });
}

export function graph(
  title: string,
  unit: string,
  width: number,
  left: cw.IMetric[],
  leftAnnotations: cw.HorizontalAnnotation[] = [],
  right: cw.IMetric[] = [],
  rightAnnotations: cw.HorizontalAnnotation[] = [],
): cw.GraphWidget {
  return new cw.GraphWidget({
    title,
    left,
    width,
    height: 6,
    leftYAxis: { label: unit, showUnits: false, min: 0 },
    ...(leftAnnotations.length > 0 ? { leftAnnotations } : {}),
    ...(right.length > 0 ? { right, rightYAxis: { label: 'Seconds', showUnits: false, min: 0 } } : {}),
    ...(rightAnnotations.length > 0 ? { rightAnnotations } : {}),
  });
}

/**
 * Rate used per lane against maxSendRate: recipients given a send slot per second, normal and high
 * (the shared rate lease, lambdas/send-email/send/shared-pacer.ts), with the high lane's reserve;
 * on the right, the lease's writes and its fallbacks to the static share, per minute.
 */
export function laneRateWidget(pipeline: EmailPipeline): cw.GraphWidget {
  const { settings } = pipeline;
  const perMinute = Duration.minutes(1);
  const lane = (name: string) =>
    new cw.MathExpression({
      expression: `${name} / PERIOD(${name})`,
      usingMetrics: {
        [name]: new cw.Metric({
          namespace: settings.metricsNamespace,
          metricName: LANE_METRIC.recipientsPaced,
          dimensionsMap: { service: pipeline.serviceName, lane: name },
          statistic: cw.Stats.SUM,
          period: perMinute,
        }),
      },
      label: `${name} (recipients per second)`,
      period: perMinute,
    });
  const reserve = (settings.maxSendRate * settings.highPriorityRateShare) / 100;
  return new cw.GraphWidget({
    title: `Rate used per lane (maxSendRate ${settings.maxSendRate}/s, high reserve ${reserve}/s)`,
    left: [lane('normal'), lane('high')],
    right: [
      handlerMetric(pipeline, HANDLER_METRICS.rateLeaseWrites, { label: 'Rate lease writes', period: perMinute }),
      handlerMetric(pipeline, HANDLER_METRICS.rateLeaseFallbacks, {
        label: 'Fallbacks to the static share',
        period: perMinute,
      }),
      handlerMetric(pipeline, HANDLER_METRICS.rateLeaseRepairs, {
        label: 'Implausible lease items found (repaired)',
        period: perMinute,
      }),
    ],
    leftAnnotations: [
      { value: settings.maxSendRate, label: 'maxSendRate' },
      { value: reserve, label: 'high-priority reserve' },
    ],
    width: 24,
    height: 6,
    leftYAxis: { label: 'Per second', showUnits: false, min: 0 },
    rightYAxis: { label: 'Per minute', showUnits: false, min: 0 },
  });
}
