/**
 * Every alarm of the pipeline, declared once as data (ALARM_CATALOG: the paging alarms, then the
 * warnings), the names derived from it, and what docs/operators.md generates from it (`npm run
 * docs:alarms`, tools/build/alarm-docs.ts): the alarm table and, under each runbook heading, a
 * facts line. createAlarms (alarms.ts) makes one CloudWatch alarm per entry; defaultAlarms
 * (alarm-defaults.ts) reads the defaults from it.
 */
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { DEFAULTS } from '../../settings';
import { percent, type AlarmDeclaration, type AlarmSettings } from './alarm-declaration';
import { PAGING_ALARMS } from './paging-alarms';
import { WARNING_ALARMS } from './warning-alarms';

/** Every alarm by name, in the order of the alarm table and the runbooks. */
export const ALARM_CATALOG = { ...PAGING_ALARMS, ...WARNING_ALARMS } satisfies Record<string, AlarmDeclaration>;

/** The name of one alarm (a key of {@link ALARM_CATALOG}). */
export type AlarmName = keyof typeof ALARM_CATALOG;

/** Every alarm's name, in the catalog's order (the alarm table's and the runbooks'). */
export const ALARM_NAMES = Object.keys(ALARM_CATALOG) as AlarmName[];

/** The declaration of one alarm. */
export function alarmDeclaration(name: AlarmName): AlarmDeclaration {
  return ALARM_CATALOG[name];
}

/** The default threshold of a declaration for these settings. */
export function declaredThreshold(declaration: AlarmDeclaration, settings: AlarmSettings): number {
  return typeof declaration.threshold === 'function' ? declaration.threshold(settings) : declaration.threshold;
}

/** The anchor of an alarm's runbook section in docs/operators.md (its heading is `#### Alarm: <name>`). */
export function runbookAnchor(name: AlarmName): string {
  return `alarm-${name.toLowerCase()}`;
}

/** The threshold as the alarm table writes it, with the default settings. */
export function thresholdText(declaration: AlarmDeclaration): string {
  const value = declaredThreshold(declaration, DEFAULTS);
  const text =
    declaration.unit === 'fraction' ? percent(value) : declaration.unit === 'seconds' ? `${value} s` : `${value}`;
  return declaration.thresholdText === undefined ? text : `${declaration.thresholdText} (${text})`;
}

/** The evaluation as the alarm table and the runbooks write it: `3 of 3 × 300 s`. */
export function datapointsText(declaration: AlarmDeclaration): string {
  return `${declaration.datapointsToAlarm} of ${declaration.evaluationPeriods} × ${declaration.periodSeconds} s`;
}

const MISSING_DATA: Readonly<Record<string, string>> = {
  [cw.TreatMissingData.IGNORE]: 'keeps state',
  [cw.TreatMissingData.NOT_BREACHING]: 'not breaching',
  [cw.TreatMissingData.BREACHING]: 'breaching',
  [cw.TreatMissingData.MISSING]: 'missing',
};

/**
 * The alarm table of docs/operators.md: one row per declared alarm, linking its runbook section,
 * with its defaults. Padded as Prettier pads a Markdown table, so the page stays formatted.
 */
export function alarmTable(): string {
  const rows = [
    ['alarm', 'severity', 'metric', 'fires above', 'datapoints', 'no data', 'means'],
    ...ALARM_NAMES.map((name) => {
      const d = alarmDeclaration(name);
      return [
        `[\`${name}\`](#${runbookAnchor(name)})`,
        d.severity,
        d.watches,
        thresholdText(d),
        datapointsText(d),
        MISSING_DATA[d.treatMissingData] ?? d.treatMissingData,
        `${d.summary}${d.enabled ? '' : ' (off unless enabled)'}${d.requires ? ` (only with ${d.requires})` : ''}`,
      ];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(3, ...rows.map((row) => [...row[column]!].length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/**
 * The line under an alarm's runbook heading in docs/operators.md, from its declaration: severity,
 * threshold, datapoints, what it watches, e.g. `_Warns · above 0 · 1 of 1 × 300 s · watches \`AmbiguousSends\`_`.
 */
export function runbookFacts(name: AlarmName): string {
  const d = alarmDeclaration(name);
  const facts = [
    d.severity === 'page' ? 'Pages' : 'Warns',
    `above ${thresholdText(d)}`,
    datapointsText(d),
    `watches ${d.watches}`,
    ...(d.enabled ? [] : ['off unless enabled']),
    ...(d.requires ? [`only with ${d.requires}`] : []),
  ];
  return `_${facts.join(' · ')}_`;
}
