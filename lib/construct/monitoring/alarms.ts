/**
 * The pipeline's alarms and where they notify: an encrypted ops topic (or the
 * operator's own), every alarm tunable or switchable, defaults documented per alarm.
 */
import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { DEFAULTS, SettingsError, configuredAddressProblem } from '../../settings';
import type { EmailPipeline } from '../email-pipeline';
import { HANDLER_METRICS, LEDGER_METRICS, handlerMetric, sesMetric } from './metrics';

/** How one alarm behaves. Every field is optional; see each alarm for its defaults. */
export interface AlarmTuning {
  /** Create this alarm. @default true */
  readonly enabled?: boolean;
  /** The alarm fires when the statistic is greater than this. @default per alarm */
  readonly threshold?: number;
  /** Consecutive periods above the threshold before it fires. @default per alarm */
  readonly evaluationPeriods?: number;
  /** Length of one period in seconds (60 or a multiple of 60). @default per alarm */
  readonly periodSeconds?: number;
}

/** The alarms of the pipeline, each tunable or switchable. */
export interface PipelineAlarmsProps {
  /**
   * The DLQ holds messages (permanent failures, or retries exhausted).
   * @default threshold 0 (any visible message), 1 period of 300 s, statistic Maximum
   */
  readonly deadLetterQueueNotEmpty?: AlarmTuning;
  /**
   * The oldest message in the work queue is too old: the function is not
   * keeping up, or retries are piling up.
   * @default threshold 1800 seconds, 1 period of 300 s, statistic Maximum
   */
  readonly oldestMessageAge?: AlarmTuning;
  /**
   * The function failed invocations (crashes, timeouts; per-message failures
   * are counted by the handler, not here).
   * @default threshold 0 (any error), 1 period of 300 s, statistic Sum
   */
  readonly functionErrors?: AlarmTuning;
  /**
   * A send may or may not have reached SES (timeout, reset, 5xx): the one
   * window where a retry can duplicate an email.
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly ambiguousSends?: AlarmTuning;
  /**
   * SES accepted an email but its completion could not be recorded within the
   * invocation (idempotency store down or throttled for longer): a copy that
   * arrives later may send it again.
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly completionWriteFailures?: AlarmTuning;
  /**
   * The account cannot send (paused, suspended, daily quota).
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly systemicFailures?: AlarmTuning;
  /**
   * SNS failed to deliver to the queue.
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly snsDeliveryFailures?: AlarmTuning;
  /**
   * The account's SES bounce rate (Reputation.BounceRate, a fraction). SES
   * reviews an account at 5% and may pause sending at 10%.
   * @default threshold 0.05, 1 period of 900 s, statistic Maximum
   */
  readonly sesBounceRate?: AlarmTuning;
  /**
   * A send whose outcome was unknown got no SES event within
   * sendConfirmationGraceSeconds and was sent again: the recipient may have
   * two copies (SES events are best-effort).
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly unconfirmedResends?: AlarmTuning;
  /**
   * SES events the ledger function could not record are in the ledger's DLQ:
   * statuses lag, and confirmations of those keys cannot happen.
   * @default threshold 0 (any visible message), 1 period of 300 s, statistic Maximum
   */
  readonly ledgerDeadLetters?: AlarmTuning;
  /**
   * SES events the ledger refused: not from the pipeline's topic, account,
   * configuration set or send function, or not bound to an attempt of the key's
   * claim. Someone may be planting evidence to stop sends or rewrite statuses.
   * @default threshold 0 (any), 1 period of 300 s, statistic Sum
   */
  readonly ledgerUntrustedEvents?: AlarmTuning;
  /**
   * A message is still being retried long after it first reached the queue (an
   * outage of the store or SES, or sending held back for the account).
   * @default threshold the pipeline's retryingTooLongSeconds (900), 1 period of 300 s, statistic Maximum
   */
  readonly retryingTooLong?: AlarmTuning;
}

interface AlarmDefaults {
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly periodSeconds: number;
}

const ALARM_DEFAULTS: Readonly<Record<keyof PipelineAlarmsProps, AlarmDefaults>> = {
  deadLetterQueueNotEmpty: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  oldestMessageAge: { threshold: 1800, evaluationPeriods: 1, periodSeconds: 300 },
  functionErrors: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  ambiguousSends: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  completionWriteFailures: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  systemicFailures: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  snsDeliveryFailures: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  sesBounceRate: { threshold: 0.05, evaluationPeriods: 1, periodSeconds: 900 },
  unconfirmedResends: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  ledgerUntrustedEvents: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  ledgerDeadLetters: { threshold: 0, evaluationPeriods: 1, periodSeconds: 300 },
  retryingTooLong: { threshold: DEFAULTS.retryingTooLongSeconds, evaluationPeriods: 1, periodSeconds: 300 },
};

/** Defaults of every alarm, for documentation and tests. */
export const DEFAULT_ALARMS: Readonly<Record<keyof PipelineAlarmsProps, AlarmDefaults>> = ALARM_DEFAULTS;

/** The alarm and OK notification topic: encrypted with its own customer-managed key, TLS only. */
export function createAlarmTopic(scope: Construct): sns.Topic {
  const stack = Stack.of(scope);
  const key = new kms.Key(scope, 'AlarmTopicKey', {
    description: 'Encrypts the email pipeline alarm topic',
    enableKeyRotation: true,
  });
  // CloudWatch publishes alarm notifications to the encrypted topic.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsUseKey',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      // Only alarms of this account, as the topic policy says.
      conditions: alarmSourceConditions(stack),
    }),
  );
  const topic = new sns.Topic(scope, 'AlarmTopic', {
    displayName: 'Email pipeline alarms',
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: alarmSourceConditions(stack),
    }),
  );
  return topic;
}

/** Subscribes an email address (checked first) to the alarm topic. */
export function subscribeAlarmEmail(topic: sns.ITopic, alarmEmail: string): void {
  const problem = configuredAddressProblem(alarmEmail);
  if (problem !== undefined) throw new SettingsError('alarmEmail', alarmEmail, problem);
  const subscription = topic.addSubscription(new EmailSubscription(alarmEmail));
  Validations.of(subscription).acknowledge({
    id: 'Serverless::Serverless-SNSRedrivePolicy',
    reason:
      'An alarm mail SNS cannot deliver is not lost information: the alarm keeps its state and history in ' +
      'CloudWatch, and the dashboard shows it. A DLQ of undelivered alarm mails would itself need watching.',
  });
}

export interface CreateAlarmsOptions {
  /** The pipeline to watch. */
  readonly pipeline: EmailPipeline;
  /** Where alarm (and OK) notifications go. */
  readonly topic: sns.ITopic;
  /** Thresholds and switches. */
  readonly config: PipelineAlarmsProps;
  /** Notify when an alarm returns to OK too. */
  readonly notifyOnOk: boolean;
}

/** Creates every alarm that is switched on, in `scope`; returns them by name. */
export function createAlarms(
  scope: Construct,
  { pipeline: p, topic, config, notifyOnOk }: CreateAlarmsOptions,
): Partial<Record<keyof PipelineAlarmsProps, cw.Alarm>> {
  const alarms: Partial<Record<keyof PipelineAlarmsProps, cw.Alarm>> = {};
  const action = new SnsAction(topic);

  const make = (
    name: keyof PipelineAlarmsProps,
    metricFor: (period: Duration) => cw.IMetric,
    description: string | ((tuning: AlarmDefaults) => string),
    tuningOverride: AlarmTuning | undefined = config[name],
  ): void => {
    const tuning = resolveTuning(name, tuningOverride);
    if (tuning === undefined) return;
    const alarm = new cw.Alarm(scope, alarmId(name), {
      metric: metricFor(Duration.seconds(tuning.periodSeconds)),
      threshold: tuning.threshold,
      evaluationPeriods: tuning.evaluationPeriods,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      alarmDescription: typeof description === 'string' ? description : description(tuning),
    });
    alarm.addAlarmAction(action);
    if (notifyOnOk) alarm.addOkAction(action);
    alarms[name] = alarm;
  };

  make(
    'deadLetterQueueNotEmpty',
    (period) => p.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: cw.Stats.MAXIMUM }),
    'Messages are in the email DLQ: permanent failures (reason in the message attributes) or retries exhausted. Inspect, fix, then redrive.',
  );
  make(
    'oldestMessageAge',
    (period) => p.queue.metricApproximateAgeOfOldestMessage({ period, statistic: cw.Stats.MAXIMUM }),
    'The oldest email request has waited too long in the queue: the function is failing, throttled or retrying.',
  );
  make(
    'functionErrors',
    (period) => p.sendFunction.metricErrors({ period, statistic: cw.Stats.SUM }),
    'The send-email function failed invocations (crash or timeout); the whole batch comes back after the visibility timeout.',
  );
  make(
    'ambiguousSends',
    (period) => handlerMetric(p, HANDLER_METRICS.ambiguousSends, { period }),
    'SES may or may not have accepted some emails (timeout, reset or 5xx): a retry may have sent a duplicate. Check SES sending events.',
  );
  make(
    'completionWriteFailures',
    (period) => handlerMetric(p, HANDLER_METRICS.completionWriteFailures, { period }),
    'SES accepted emails whose completion could not be recorded (the idempotency store was down or throttled for longer than an invocation): a later copy of such a message may be sent again. Check DynamoDB.',
  );
  make(
    'systemicFailures',
    (period) => handlerMetric(p, HANDLER_METRICS.systemicFailures, { period }),
    'SES refuses to send for the account (paused, suspended or daily quota). Messages wait in the queue; check the SES account status.',
  );
  make(
    'snsDeliveryFailures',
    (period) => p.topic.metricNumberOfNotificationsFailed({ period, statistic: cw.Stats.SUM }),
    'SNS failed to deliver email requests to the queue (check the queue policy and the queue key policy).',
  );
  make(
    'sesBounceRate',
    (period) => sesMetric('Reputation.BounceRate', { period, statistic: cw.Stats.MAXIMUM }),
    'The SES account bounce rate is high: SES reviews accounts at 5% and may pause sending at 10%.',
  );

  // --- send ledger ---
  make(
    'unconfirmedResends',
    (period) => handlerMetric(p, LEDGER_METRICS.unconfirmedResends, { period }),
    'Sends whose outcome was unknown got no SES event within the grace period and were sent again: those recipients may have two copies. The send function logs each key at WARN; check the SES event destination and the ledger DLQ.',
  );
  make(
    'ledgerDeadLetters',
    (period) =>
      p.ledger.bufferDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period,
        statistic: cw.Stats.MAXIMUM,
      }),
    'SES events the ledger function could not record are in the ledger DLQ: delivery statuses lag and unknown-fate sends of those keys cannot be confirmed. Check the ledger function logs.',
  );

  make(
    'ledgerUntrustedEvents',
    (period) => handlerMetric(p, LEDGER_METRICS.untrustedEvents, { period }),
    'The send ledger refused SES events that are not bound to a send of the pipeline (another origin, or an attempt id the key never sent with): someone may be planting evidence. The ledger function logs each at WARN with the key and the reason; find who publishes to the SES events topic.',
  );

  // --- brown-outs: send pacing, the circuit breaker, the retry budget ---
  // Messages that keep retrying past the pipeline's retryingTooLongSeconds.
  make(
    'retryingTooLong',
    (period) => handlerMetric(p, HANDLER_METRICS.retryAge, { period, statistic: cw.Stats.MAXIMUM }),
    (tuning) =>
      `A message has been retrying for more than ${tuning.threshold} s since it reached the queue ` +
      '(idempotency store or SES unavailable, or the account cannot send). It is mailed once the cause passes, ' +
      `or dead-lettered as RetryBudgetExhausted after ${p.settings.retryBudgetSeconds} s.`,
    { threshold: p.settings.retryingTooLongSeconds, ...config.retryingTooLong },
  );
  return alarms;
}

function alarmId(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1) + 'Alarm';
}

function resolveTuning(name: keyof PipelineAlarmsProps, tuning: AlarmTuning | undefined): AlarmDefaults | undefined {
  if (tuning?.enabled === false) return undefined;
  const d = ALARM_DEFAULTS[name];
  const resolved = {
    threshold: tuning?.threshold ?? d.threshold,
    evaluationPeriods: tuning?.evaluationPeriods ?? d.evaluationPeriods,
    periodSeconds: tuning?.periodSeconds ?? d.periodSeconds,
  };
  const setting = (field: string) => `alarms.${name}.${field}`;
  if (!Number.isFinite(resolved.threshold) || resolved.threshold < 0) {
    throw new SettingsError(setting('threshold'), resolved.threshold, 'must be a number of at least 0');
  }
  if (
    !Number.isInteger(resolved.evaluationPeriods) ||
    resolved.evaluationPeriods < 1 ||
    resolved.evaluationPeriods > 100
  ) {
    throw new SettingsError(
      setting('evaluationPeriods'),
      resolved.evaluationPeriods,
      'must be a whole number from 1 to 100',
    );
  }
  if (
    !Number.isInteger(resolved.periodSeconds) ||
    resolved.periodSeconds < 60 ||
    resolved.periodSeconds % 60 !== 0 ||
    resolved.periodSeconds * resolved.evaluationPeriods > 7 * 24 * 60 * 60
  ) {
    throw new SettingsError(
      setting('periodSeconds'),
      resolved.periodSeconds,
      'must be a multiple of 60 seconds, and periods x evaluationPeriods at most 7 days',
    );
  }
  return resolved;
}

/** CloudWatch alarms of the stack's account and region, as `aws:SourceAccount`/`aws:SourceArn` conditions. */
function alarmSourceConditions(stack: Stack): Record<string, Record<string, string>> {
  return {
    StringEquals: { 'aws:SourceAccount': stack.account },
    ArnLike: {
      'aws:SourceArn': stack.formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    },
  };
}
