/**
 * The pipeline's alarms, in two severities: `page` (the paging topic) only where a person must act
 * now, `warn` (the warning topic) for what the pipeline settles by itself or what can wait for
 * working hours. createAlarms makes one CloudWatch alarm per entry of the catalog
 * (alarm-catalog.ts), tuned by the props: every alarm is named (prefixed by stack and construct),
 * links its runbook section of docs/operators.md and is tunable or switchable. No alarm is made
 * outside the catalog; the reputation pause adds its action to two of them (monitoring.ts).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { SettingsError } from '../../settings';
import type { EmailPipeline } from '../email-pipeline';
import { ALARM_CATALOG, ALARM_NAMES, runbookAnchor } from './alarm-catalog';
import { ALARM_COMPARISON } from './alarm-declaration';
import { defaultAlarms } from './alarm-defaults';
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
  /** The alarm (of a per-team alarm, the first team's). */
  readonly alarm: cw.Alarm;
  /** A per-team alarm's alarms, by team. @default none: one alarm */
  readonly byTeam?: Readonly<Record<string, cw.Alarm>>;
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
  for (const name of ALARM_NAMES) {
    const declaration = ALARM_CATALOG[name];
    if (!watchesSomething(declaration, p)) continue;
    const tuning = resolveTuning(name, defaults[name], config[name], declaration.enabled);
    if (tuning === undefined) continue;
    const link = `${runbookUrl}#${runbookAnchor(name)}`;
    // A per-team alarm: one for each team, its name and id ending with the team's.
    for (const team of declaration.perTeam ? Object.keys(p.teamQueues) : [undefined]) {
      const suffix = team === undefined ? '' : `-${team}`;
      const alarm = new cw.Alarm(scope, alarmId(name) + suffix, {
        alarmName: `${namePrefix}-${tuning.severity}-${name.charAt(0).toUpperCase()}${name.slice(1)}${suffix}`,
        metric: declaration.metric(p, Duration.seconds(tuning.periodSeconds), team),
        threshold: tuning.threshold,
        evaluationPeriods: tuning.evaluationPeriods,
        datapointsToAlarm: tuning.datapointsToAlarm,
        comparisonOperator: ALARM_COMPARISON,
        treatMissingData: tuning.treatMissingData,
        alarmDescription: `[${tuning.severity === 'page' ? 'PAGE' : 'WARN'}] ${declaration.description(p, tuning, team)} Runbook: ${link}`,
      });
      const action = actions[tuning.severity];
      alarm.addAlarmAction(action);
      if (notifyOnOk) alarm.addOkAction(action);
      const found = alarms[name];
      alarms[name] = {
        alarm: found?.alarm ?? alarm,
        severity: tuning.severity,
        threshold: tuning.threshold,
        ...(team === undefined ? {} : { byTeam: { ...found?.byTeam, [team]: alarm } }),
      };
    }
  }
  return alarms;
}

/** Whether the pipeline has what the alarm watches (the callbacks' alarms: only with callbacks; the tenants': with tenants; the teams': with teams). */
function watchesSomething(
  declaration: { readonly requires?: 'callbacks' | 'tenants' | 'teams' },
  p: EmailPipeline,
): boolean {
  if (declaration.requires === 'callbacks') return p.callbacks !== undefined;
  if (declaration.requires === 'tenants') return p.tenantStatus !== undefined;
  if (declaration.requires === 'teams') return Object.keys(p.teamQueues).length > 0;
  return true;
}

function alarmId(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1) + 'Alarm';
}

function resolveTuning(
  name: AlarmName,
  defaults: AlarmDefaults,
  tuning: AlarmTuning | undefined,
  enabledByDefault: boolean,
): AlarmDefaults | undefined {
  if (!(tuning?.enabled ?? enabledByDefault)) return undefined;
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
