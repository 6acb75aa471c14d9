/**
 * Every alarm's default severity, threshold and evaluation, derived from the resolved settings,
 * and where its runbook section is.
 */
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { docsUrl } from '../../package-info';
import { DEFAULTS, DLQ_RETENTION_SECONDS, type ResolvedSettings } from '../../settings';
import type { AlarmDefaults, AlarmName, AlarmSeverity } from './alarm-props';

const DAY = 24 * 60 * 60;

/** How long before the DLQ deletes a message the deadLetterAge alarm warns. */
export const DEAD_LETTER_AGE_MARGIN_SECONDS = 4 * DAY;

/** The defaults of every alarm for these settings (`maxSendRate`, `retryingTooLongSeconds` decide two). */
export function defaultAlarms(
  settings: Pick<ResolvedSettings, 'maxSendRate' | 'retryingTooLongSeconds'>,
): Readonly<Record<AlarmName, AlarmDefaults>> {
  const NOT_BREACHING = cw.TreatMissingData.NOT_BREACHING;
  // Reputation rates are published only while there is sending to rate: a quiet hour must neither
  // raise nor clear an alarm (after a pause, the last rate stands until sending resumes).
  const KEEP_STATE = cw.TreatMissingData.IGNORE;
  const any = (severity: AlarmSeverity): AlarmDefaults => ({
    severity,
    threshold: 0,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    periodSeconds: 300,
    treatMissingData: NOT_BREACHING,
  });
  const rate = (threshold: number): AlarmDefaults => ({
    severity: 'page',
    threshold,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    periodSeconds: 900,
    treatMissingData: KEEP_STATE,
  });
  const sustained = (threshold: number): AlarmDefaults => ({
    severity: 'page',
    threshold,
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
    periodSeconds: 300,
    treatMissingData: NOT_BREACHING,
  });
  return {
    sesComplaintRateWarning: rate(0.0005),
    sesComplaintRate: rate(0.001),
    sesBounceRateWarning: rate(0.02),
    sesBounceRate: rate(0.05),
    retriesStalled: sustained(3600),
    backlogTooLarge: sustained(settings.maxSendRate * 1800),
    systemicFailures: any('page'),
    functionThrottles: { ...any('page'), evaluationPeriods: 5, datapointsToAlarm: 5, periodSeconds: 60 },
    operatorDeadLetters: any('page'),
    subscriptionDeadLetters: any('page'),
    unconfirmedResends: any('page'),
    ledgerStalled: sustained(900),
    ledgerSilent: { ...any('page'), evaluationPeriods: 2, datapointsToAlarm: 2, periodSeconds: 900 },
    ambiguousSends: any('warn'),
    functionErrors: any('warn'),
    ledgerFunctionErrors: any('warn'),
    statusFunctionErrors: any('warn'),
    completionWriteFailures: any('warn'),
    snsDeliveryFailures: any('warn'),
    publisherDeadLetters: any('warn'),
    deadLetterAge: {
      ...any('warn'),
      threshold: DLQ_RETENTION_SECONDS - DEAD_LETTER_AGE_MARGIN_SECONDS,
      periodSeconds: 3600,
    },
    ledgerDeadLetters: any('warn'),
    ledgerUntrustedEvents: any('warn'),
    retryingTooLong: {
      ...any('warn'),
      threshold: settings.retryingTooLongSeconds,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    },
    tableThrottles: { ...any('warn'), evaluationPeriods: 3, datapointsToAlarm: 2 },
    tableSystemErrors: any('warn'),
    sesRejects: any('warn'),
  };
}

/** Defaults of every alarm with the default settings, for documentation and tests. */
export const DEFAULT_ALARMS: Readonly<Record<AlarmName, AlarmDefaults>> = defaultAlarms(DEFAULTS);

/** Every alarm's name, in the order of {@link PipelineAlarmsProps} (the README's order). */
export const ALARM_NAMES = Object.keys(DEFAULT_ALARMS) as AlarmName[];

/** The README anchor of an alarm's runbook section (its heading is `#### Alarm: <name>`). */
export function runbookAnchor(name: AlarmName): string {
  return `alarm-${name.toLowerCase()}`;
}

/**
 * Where runbook links point by default: the operators' guide (docs/operators.md, one section per
 * alarm) at the installed version's tag in the package's repository, so each alarm links the
 * runbook of the alarm it is. The same file ships in the package (`node_modules/exactly-once-email/
 * docs/operators.md`): copy it to your wiki and set `runbookUrl` there to follow your own changes.
 */
export const DEFAULT_RUNBOOK_URL = docsUrl('docs/operators.md');
