/**
 * What the declaration of one alarm holds (AlarmDeclaration: severity, what it watches, threshold,
 * evaluation, missing data, runbook summary, description), the evaluation shapes most alarms share,
 * and the wording helpers their descriptions use. The alarms themselves are declared in
 * paging-alarms.ts and warning-alarms.ts and gathered in alarm-catalog.ts.
 */
import type { Duration } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import type { ResolvedSettings } from '../../settings';
import type { EmailPipeline } from '../email-pipeline';
import { reputationScope } from './metrics';

/** `page`: a person must act now (the paging topic). `warn`: look during working hours (the warning topic). */
export type AlarmSeverity = 'page' | 'warn';

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

/** The settings alarm defaults may follow. */
export type AlarmSettings = Pick<ResolvedSettings, 'maxSendRate' | 'retryingTooLongSeconds'>;

/** Every alarm fires when its statistic is greater than its threshold. */
export const ALARM_COMPARISON = cw.ComparisonOperator.GREATER_THAN_THRESHOLD;

/** How an alarm is evaluated by default. */
export interface AlarmEvaluation {
  readonly severity: AlarmSeverity;
  /** The default threshold, fixed or following the settings. */
  readonly threshold: number | ((settings: AlarmSettings) => number);
  /** What the threshold counts, for the alarm table: a fraction is written as a percentage. */
  readonly unit: 'count' | 'seconds' | 'fraction';
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly periodSeconds: number;
  readonly treatMissingData: cw.TreatMissingData;
  /** Created unless switched off. */
  readonly enabled: boolean;
  /**
   * A part of the pipeline it watches that not every pipeline has: `callbacks` (created only when a
   * callback is configured), `tenants` (only when a team has an SES tenant), `teams` (only with
   * teams). @default none: every pipeline has what it watches
   */
  readonly requires?: 'callbacks' | 'tenants' | 'teams';
  /**
   * One alarm per team (its name and id end with the team's name), each watching that team's part
   * (`metric` and `description` get the team). @default false: one alarm
   */
  readonly perTeam?: boolean;
}

/**
 * One alarm, declared once: the construct, its defaults, and the alarm table and runbook headings of
 * docs/operators.md read it.
 */
export interface AlarmDeclaration extends AlarmEvaluation {
  /** What it reads, for the alarm table ("metric" column) and the runbook's facts line (Markdown). */
  readonly watches: string;
  /** The threshold as the alarm table writes it, where it follows a setting. @default from threshold and unit */
  readonly thresholdText?: string;
  /** One line: what firing means (the alarm table's last column). */
  readonly summary: string;
  /** The metric or metric math it watches, at the resolved period (of `team`, for a per-team alarm). */
  readonly metric: (pipeline: EmailPipeline, period: Duration, team?: string) => cw.IMetric;
  /** Its description, before the runbook link: what happened and where to look first. */
  readonly description: (pipeline: EmailPipeline, tuning: AlarmDefaults, team?: string) => string;
}

/** Any occurrence in one 5-minute period, not breaching without data. */
export function onAny(severity: AlarmSeverity): AlarmEvaluation {
  return {
    severity,
    threshold: 0,
    unit: 'count',
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    periodSeconds: 300,
    treatMissingData: cw.TreatMissingData.NOT_BREACHING,
    enabled: true,
  };
}

/**
 * A reputation rate above `threshold` in one 15-minute period. Reputation rates are published only
 * while there is sending to rate: a quiet hour must neither raise nor clear the alarm (after a
 * pause, the last rate stands until sending resumes), so missing data keeps the state.
 */
export function reputationRate(threshold: number): AlarmEvaluation {
  return {
    ...onAny('page'),
    threshold,
    unit: 'fraction',
    periodSeconds: 900,
    treatMissingData: cw.TreatMissingData.IGNORE,
  };
}

/** Above `threshold` in three 5-minute periods running (15 minutes). */
export function sustained(threshold: AlarmEvaluation['threshold'], unit: AlarmEvaluation['unit']): AlarmEvaluation {
  return { ...onAny('page'), threshold, unit, evaluationPeriods: 3, datapointsToAlarm: 3 };
}

/** A fraction as a percentage: 0.0005 -> `0.05 %`. */
export function percent(fraction: number): string {
  return `${+(fraction * 100).toFixed(3)} %`;
}

/** Whose reputation the reputation alarms read, as their descriptions say it. */
export function reputationOf(pipeline: EmailPipeline): string {
  return reputationScope(pipeline) === 'configuration-set'
    ? `configuration set ${pipeline.ledger.configurationSetName} or of the account (the larger of the two: SES reviews and pauses the account on its own rate)`
    : 'account (the configuration set was given by name, so the account-level rate stands in)';
}
