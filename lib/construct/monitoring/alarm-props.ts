/**
 * The alarms' props and tuning types: PipelineAlarmsProps has one optional AlarmTuning per alarm of
 * the catalog (alarm-catalog.ts), whose defaults the alarm table of docs/operators.md lists. Types only.
 */
import type { AlarmName } from './alarm-catalog';
import type { AlarmDefaults, AlarmSeverity } from './alarm-declaration';

export type { AlarmDefaults, AlarmName, AlarmSeverity };

/** How one alarm behaves. Every field is optional; the alarm table of docs/operators.md has each alarm's defaults. */
export interface AlarmTuning {
  /** Create this alarm. @default true */
  readonly enabled?: boolean;
  /** The alarm fires when the statistic is greater than this. @default per alarm */
  readonly threshold?: number;
  /** Periods looked at for each evaluation. @default per alarm */
  readonly evaluationPeriods?: number;
  /** Of those, how many must be above the threshold (at most evaluationPeriods). @default per alarm */
  readonly datapointsToAlarm?: number;
  /** Length of one period in seconds (60 or a multiple of 60). @default per alarm */
  readonly periodSeconds?: number;
  /** Which topic it notifies. @default per alarm */
  readonly severity?: AlarmSeverity;
}

/**
 * The alarms of the pipeline by name, each tunable or switchable. Thresholds compare with "greater
 * than". docs/operators.md, "Alarms and runbooks", has the table of every alarm with its defaults
 * and one runbook section per alarm (the table and the sections' headings generated from the catalog).
 */
export type PipelineAlarmsProps = { readonly [Name in AlarmName]?: AlarmTuning };
