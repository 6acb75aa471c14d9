/**
 * The pipeline's alarms, in two severities: `page` (the paging topic) only where a person must act
 * now, `warn` (the warning topic) for what the pipeline settles by itself or what can wait for
 * working hours. Every alarm is named (prefixed by stack and construct), links its runbook section
 * of the README, and is tunable or switchable; defaults are documented per alarm and in
 * {@link defaultAlarms}.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS, SettingsError } from '../../settings';
import type { EmailPipeline } from '../email-pipeline';
import {
  HANDLER_METRICS,
  LEDGER_METRICS,
  OPERATOR_DEAD_LETTER_CODES,
  arrivals,
  backlog,
  functionThrottles,
  handlerMetric,
  operatorDeadLetters,
  publisherDeadLetters,
  rejectedOrUnrendered,
  reputationMetric,
  reputationScope,
  silentLedger,
  tableSystemErrors,
  tableThrottles,
} from './metrics';
import { defaultAlarms, runbookAnchor } from './alarm-defaults';
import type { AlarmDefaults, AlarmName, AlarmSeverity, AlarmTuning, PipelineAlarmsProps } from './alarm-props';

export * from './alarm-defaults';
export * from './alarm-props';

const DAY = 24 * 60 * 60;

export interface CreateAlarmsOptions {
  /** The pipeline to watch. */
  readonly pipeline: EmailPipeline;
  /** Where each severity notifies (alarm and OK notifications). */
  readonly topics: Readonly<Record<AlarmSeverity, sns.ITopic>>;
  /** Thresholds and switches. */
  readonly config: PipelineAlarmsProps;
  /** Notify when an alarm returns to OK too. */
  readonly notifyOnOk: boolean;
  /** Prefix of every alarm name. */
  readonly namePrefix: string;
  /** The page whose anchors the descriptions link (`<runbookUrl>#alarm-<name>`). */
  readonly runbookUrl: string;
}

/** One alarm that was created, with how it was resolved. */
export interface PipelineAlarm {
  readonly alarm: cw.Alarm;
  readonly severity: AlarmSeverity;
  readonly threshold: number;
}

/** The default prefix of alarm names: the stack's name and the construct's path below it. */
export function defaultAlarmNamePrefix(scope: Construct): string {
  const stack = Stack.of(scope);
  const below = scope.node.scopes.slice(scope.node.scopes.indexOf(stack) + 1).map((c) => c.node.id);
  return [stack.stackName, ...below].join('-');
}

/** Creates every alarm that is switched on, in `scope`; returns them by name. */
export function createAlarms(
  scope: Construct,
  { pipeline: p, topics, config, notifyOnOk, namePrefix, runbookUrl }: CreateAlarmsOptions,
): Partial<Record<AlarmName, PipelineAlarm>> {
  const alarms: Partial<Record<AlarmName, PipelineAlarm>> = {};
  const defaults = defaultAlarms(p.settings);
  const actions = { page: new SnsAction(topics.page), warn: new SnsAction(topics.warn) };
  const percent = (fraction: number) => `${+(fraction * 100).toFixed(3)} %`;
  const reputationOf =
    reputationScope(p) === 'configuration-set'
      ? `configuration set ${p.ledger.configurationSetName} or of the account (the larger of the two: SES reviews and pauses the account on its own rate)`
      : 'account (the configuration set was given by name, so the account-level rate stands in)';

  const make = (
    name: AlarmName,
    metricFor: (period: Duration) => cw.IMetric,
    description: (tuning: AlarmDefaults) => string,
  ): void => {
    const tuning = resolveTuning(name, defaults[name], config[name]);
    if (tuning === undefined) return;
    const link = `${runbookUrl}#${runbookAnchor(name)}`;
    const alarm = new cw.Alarm(scope, alarmId(name), {
      alarmName: `${namePrefix}-${tuning.severity}-${name.charAt(0).toUpperCase()}${name.slice(1)}`,
      metric: metricFor(Duration.seconds(tuning.periodSeconds)),
      threshold: tuning.threshold,
      evaluationPeriods: tuning.evaluationPeriods,
      datapointsToAlarm: tuning.datapointsToAlarm,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: tuning.treatMissingData,
      alarmDescription: `[${tuning.severity === 'page' ? 'PAGE' : 'WARN'}] ${description(tuning)} Runbook: ${link}`,
    });
    const action = actions[tuning.severity];
    alarm.addAlarmAction(action);
    if (notifyOnOk) alarm.addOkAction(action);
    alarms[name] = { alarm, severity: tuning.severity, threshold: tuning.threshold };
  };
  const sum = cw.Stats.SUM;
  const max = cw.Stats.MAXIMUM;

  // --- reputation ---
  make(
    'sesComplaintRateWarning',
    (period) => reputationMetric(p, 'ComplaintRate', { period }),
    (t) =>
      `Complaint rate of the ${reputationOf} above ${percent(t.threshold)}: SES reviews at 0.1 % and may pause at 0.5 %; Gmail wants under 0.1 %. Find what changed in who is mailed.`,
  );
  make(
    'sesComplaintRate',
    (period) => reputationMetric(p, 'ComplaintRate', { period }),
    (t) =>
      `Complaint rate of the ${reputationOf} above ${percent(t.threshold)} (SES's review level; it may pause the account at 0.5 %). Stop the mailing that causes it.`,
  );
  make(
    'sesBounceRateWarning',
    (period) => reputationMetric(p, 'BounceRate', { period }),
    (t) =>
      `Bounce rate of the ${reputationOf} above ${percent(t.threshold)}: SES reviews at 5 % and may pause at 10 %. Find the list with bad addresses.`,
  );
  make(
    'sesBounceRate',
    (period) => reputationMetric(p, 'BounceRate', { period }),
    (t) =>
      `Bounce rate of the ${reputationOf} above ${percent(t.threshold)} (SES's review level; it may pause the account at 10 %). Stop the mailing that causes it.`,
  );

  // --- mail stalled ---
  make(
    'retriesStalled',
    (period) => handlerMetric(p, HANDLER_METRICS.retryAge, { period, statistic: max }),
    (t) =>
      `Retried emails have been waiting more than ${t.threshold} s since they reached the queue, for ${t.datapointsToAlarm} periods running: SES or the idempotency store is out, or sending is held back. Nothing is lost before RetryBudgetExhausted (${p.settings.retryBudgetSeconds} s).`,
  );
  make(
    'backlogTooLarge',
    (period) => backlog([p.queue, p.highPriorityQueue], { period }),
    (t) =>
      `More than ${t.threshold} email requests wait in the work and high-priority queues (visible + delayed copies + in flight), over ${Math.round(t.threshold / p.settings.maxSendRate / 60)} minutes of sending at maxSendRate ${p.settings.maxSendRate}/s.`,
  );
  make(
    'systemicFailures',
    (period) => handlerMetric(p, HANDLER_METRICS.systemicFailures, { period }),
    () =>
      'SES refuses to send for the account or this configuration set (paused, suspended, daily quota). Messages wait as delayed copies within the retry budget; check the SES account and the configuration set.',
  );
  make(
    'functionThrottles',
    (period) => functionThrottles(p, period),
    (t) =>
      `The send, ledger or status function was throttled in ${t.datapointsToAlarm} periods running: account or reserved concurrency is used up.`,
  );
  make(
    'operatorDeadLetters',
    (period) => operatorDeadLetters(p, period),
    () =>
      `Dead letters only the operator can fix (${OPERATOR_DEAD_LETTER_CODES.join(', ')}): fix the identity, template, sandbox or outage, then redrive those codes.`,
  );
  make(
    'subscriptionDeadLetters',
    (period) => arrivals(p.subscriptionDeadLetterQueue, { period }),
    () =>
      "SNS gave up delivering email requests to the work queue: they are in the subscription's DLQ and were never sent. Check the queue policy and the queue key.",
  );

  // --- duplicates and the ledger ---
  make(
    'unconfirmedResends',
    (period) => handlerMetric(p, LEDGER_METRICS.unconfirmedResends, { period }),
    () =>
      'Sends of unknown fate got no SES event within the grace and were sent again: those recipients may have two copies. Keys are logged at WARN; check the event destination and the ledger.',
  );
  make(
    'ledgerStalled',
    (period) => p.ledger.bufferQueue.metricApproximateAgeOfOldestMessage({ period, statistic: max }),
    (t) =>
      `SES events have waited more than ${t.threshold} s in the ledger buffer: statuses lag and unknown-fate sends will be resent after the grace. Check the ledger function.`,
  );
  make(
    'ledgerSilent',
    (period) => silentLedger(p, period),
    (t) =>
      `Emails were sent but the ledger recorded no SES event in ${t.datapointsToAlarm} windows of ${t.periodSeconds} s: the event destination, the events rule, the buffer or the ledger function is broken.`,
  );

  // --- warnings ---
  make(
    'ambiguousSends',
    (period) => handlerMetric(p, HANDLER_METRICS.ambiguousSends, { period }),
    () =>
      'SES timed out, reset or answered 5xx: the ledger confirms such sends from their SES event without resending (ConfirmedBySesEvent). Only UnconfirmedResends may be duplicates. Watch SES latency and errors.',
  );
  make(
    'functionErrors',
    (period) => p.sendFunction.metricErrors({ period, statistic: sum }),
    () =>
      'The send function failed invocations (crash or timeout); the batch comes back after the visibility timeout. Read its log group.',
  );
  make(
    'ledgerFunctionErrors',
    (period) => p.ledger.ledgerFunction.metricErrors({ period, statistic: sum }),
    () => 'The ledger function failed invocations; its events come back from the buffer. Read its log group.',
  );
  make(
    'statusFunctionErrors',
    (period) => p.ledger.statusFunction.metricErrors({ period, statistic: sum }),
    () => 'The status function failed invocations: status lookups answered 5xx. Read its log group.',
  );
  make(
    'completionWriteFailures',
    (period) => handlerMetric(p, HANDLER_METRICS.completionWriteFailures, { period }),
    () =>
      'SES accepted emails whose completion the idempotency store never recorded; a later copy is confirmed against the ledger before any resend. Check DynamoDB.',
  );
  make(
    'snsDeliveryFailures',
    // Both topics: each delivers to its own queue.
    (period) =>
      new cw.MathExpression({
        expression: 'FILL(normal, 0) + FILL(high, 0)',
        usingMetrics: {
          normal: p.topic.metricNumberOfNotificationsFailed({ period, statistic: sum }),
          high: p.highPriorityTopic.metricNumberOfNotificationsFailed({ period, statistic: sum }),
        },
        period,
        label: 'Failed deliveries of both topics',
      }),
    () =>
      "SNS failed deliveries to the work queue or the high-priority queue (it retries; what it gives up on lands in the subscription's DLQ). Check the queue policy and key.",
  );
  make(
    'publisherDeadLetters',
    (period) => publisherDeadLetters(p, period),
    () =>
      'New dead letters that are the publisher\'s fault (contract, envelope, key reused with other content): tell the publisher; never redrive them unchanged. "email-pipeline dlq list" shows codes and keys.',
  );
  make(
    'deadLetterAge',
    (period) => p.deadLetterQueue.metricApproximateAgeOfOldestMessage({ period, statistic: max }),
    (t) =>
      `A dead letter is ${Math.round(t.threshold / DAY)} days old; SQS deletes it at ${Math.round(DLQ_RETENTION_SECONDS / DAY)} days. Redrive or delete it.`,
  );
  make(
    'ledgerDeadLetters',
    (period) => p.ledger.bufferDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: max }),
    () =>
      'SES events the ledger function could not record are in the ledger DLQ: statuses of those keys lag. Read the ledger log group, then redrive or purge the ledger DLQ.',
  );
  make(
    'ledgerUntrustedEvents',
    (period) => handlerMetric(p, LEDGER_METRICS.untrustedEvents, { period }),
    () =>
      'The ledger refused SES events not bound to a send of the pipeline (not recorded). The ledger logs each with key and reason: an event whose caller identity or configuration set is not the pipeline’s (run email-pipeline verify), or one put in the buffer by someone its policy should have refused.',
  );
  make(
    'retryingTooLong',
    (period) => handlerMetric(p, HANDLER_METRICS.retryAge, { period, statistic: max }),
    (t) =>
      `A retried message reached the queue more than ${t.threshold} s ago (retryingTooLongSeconds; a long backlog counts too). It is sent once the cause passes, or dead-lettered after ${p.settings.retryBudgetSeconds} s.`,
  );
  make(
    'tableThrottles',
    (period) => tableThrottles(p, period),
    () => 'DynamoDB throttled the idempotency or ledger table: sends retry (fail-closed). Check capacity and hot keys.',
  );
  make(
    'tableSystemErrors',
    (period) => tableSystemErrors(p, period),
    () =>
      'DynamoDB answered with system errors on the idempotency or ledger table: sends retry. Check the AWS Health Dashboard.',
  );
  make(
    'sesRejects',
    (period) => rejectedOrUnrendered(p, period),
    () =>
      'SES accepted sends, then rejected them (virus) or could not render their template: nothing was delivered. Check the template and its data.',
  );
  return alarms;
}

function alarmId(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1) + 'Alarm';
}

function resolveTuning(
  name: AlarmName,
  defaults: AlarmDefaults,
  tuning: AlarmTuning | undefined,
): AlarmDefaults | undefined {
  if (tuning?.enabled === false) return undefined;
  const overrides = Object.fromEntries(
    Object.entries(tuning ?? {}).filter(([field, value]) => field !== 'enabled' && value !== undefined),
  ) as Omit<AlarmTuning, 'enabled'>;
  const evaluationPeriods = overrides.evaluationPeriods ?? defaults.evaluationPeriods;
  const resolved: AlarmDefaults = {
    ...defaults,
    ...overrides,
    evaluationPeriods,
    // Tuning only evaluationPeriods keeps "every period" alarms every period, and never asks for more than there are.
    datapointsToAlarm:
      overrides.datapointsToAlarm ??
      (defaults.datapointsToAlarm === defaults.evaluationPeriods
        ? evaluationPeriods
        : Math.min(defaults.datapointsToAlarm, evaluationPeriods)),
  };
  const setting = (field: string) => `alarms.${name}.${field}`;
  if (!Number.isFinite(resolved.threshold) || resolved.threshold < 0) {
    throw new SettingsError(setting('threshold'), resolved.threshold, 'must be a number of at least 0');
  }
  if (!Number.isInteger(resolved.evaluationPeriods) || resolved.evaluationPeriods < 1) {
    throw new SettingsError(
      setting('evaluationPeriods'),
      resolved.evaluationPeriods,
      'must be a whole number of at least 1',
    );
  }
  if (
    !Number.isInteger(resolved.datapointsToAlarm) ||
    resolved.datapointsToAlarm < 1 ||
    resolved.datapointsToAlarm > resolved.evaluationPeriods
  ) {
    throw new SettingsError(
      setting('datapointsToAlarm'),
      resolved.datapointsToAlarm,
      `must be a whole number from 1 to evaluationPeriods (${resolved.evaluationPeriods})`,
    );
  }
  if (
    !Number.isInteger(resolved.periodSeconds) ||
    resolved.periodSeconds < 60 ||
    resolved.periodSeconds % 60 !== 0 ||
    resolved.periodSeconds * resolved.evaluationPeriods > 7 * DAY
  ) {
    throw new SettingsError(
      setting('periodSeconds'),
      resolved.periodSeconds,
      'must be a multiple of 60 seconds, and periods x evaluationPeriods at most 7 days',
    );
  }
  if (resolved.severity !== 'page' && resolved.severity !== 'warn') {
    throw new SettingsError(setting('severity'), resolved.severity, 'must be "page" or "warn"');
  }
  return resolved;
}
