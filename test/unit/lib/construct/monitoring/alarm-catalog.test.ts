import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { DEFAULTS } from '../../../../../lib/settings';
import {
  ALARM_CATALOG,
  ALARM_NAMES,
  alarmTable,
  declaredThreshold,
  runbookAnchor,
  runbookFacts,
  thresholdText,
} from '../../../../../lib/construct/monitoring/alarm-catalog';
import { DEFAULT_ALARMS, defaultAlarms } from '../../../../../lib/construct/monitoring/alarm-defaults';
import { PAGING_ALARMS } from '../../../../../lib/construct/monitoring/paging-alarms';
import { WARNING_ALARMS } from '../../../../../lib/construct/monitoring/warning-alarms';

const OPERATORS = readFileSync(path.join(__dirname, '..', '..', '..', '..', '..', 'docs', 'operators.md'), 'utf8');

/** The alarms the runbook sections of docs/operators.md name, in their order. */
const runbookSections = (doc: string): string[] => [...doc.matchAll(/^#### Alarm: (.*)$/gm)].map((m) => m[1]!.trim());

describe('the alarm catalog', () => {
  test('names are unique: no warning shadows a paging alarm, no two anchors are the same', () => {
    const paging = Object.keys(PAGING_ALARMS);
    const warning = Object.keys(WARNING_ALARMS);

    expect(paging.filter((name) => warning.includes(name))).toEqual([]);
    expect(ALARM_NAMES).toHaveLength(paging.length + warning.length);
    expect(new Set(ALARM_NAMES.map(runbookAnchor)).size).toBe(ALARM_NAMES.length);
    for (const name of ALARM_NAMES) expect(name).toMatch(/^[a-z][A-Za-z]+$/);
  });

  test('paging alarms page and warnings warn by default', () => {
    for (const d of Object.values(PAGING_ALARMS)) expect(d.severity).toBe('page');
    for (const d of Object.values(WARNING_ALARMS)) expect(d.severity).toBe('warn');
  });

  test.each(ALARM_NAMES)('%s: its defaults are an evaluation CloudWatch accepts', (name) => {
    const d = ALARM_CATALOG[name];
    const threshold = declaredThreshold(d, DEFAULTS);

    expect(Number.isFinite(threshold) && threshold >= 0).toBe(true);
    expect(Number.isInteger(d.evaluationPeriods) && d.evaluationPeriods >= 1).toBe(true);
    expect(d.datapointsToAlarm >= 1 && d.datapointsToAlarm <= d.evaluationPeriods).toBe(true);
    expect(d.periodSeconds % 60).toBe(0);
    expect(d.periodSeconds * d.evaluationPeriods).toBeLessThanOrEqual(7 * 24 * 3600);
    expect([cw.TreatMissingData.IGNORE, cw.TreatMissingData.NOT_BREACHING]).toContain(d.treatMissingData);
    expect(d.summary.length).toBeGreaterThan(0);
    expect(d.summary).not.toContain('\n');
    expect(d.summary).not.toContain('|');
  });

  test('the defaults are the declarations, with thresholds that follow the settings', () => {
    for (const name of ALARM_NAMES) {
      const d = ALARM_CATALOG[name];
      expect(DEFAULT_ALARMS[name]).toEqual({
        severity: d.severity,
        threshold: declaredThreshold(d, DEFAULTS),
        evaluationPeriods: d.evaluationPeriods,
        datapointsToAlarm: d.datapointsToAlarm,
        periodSeconds: d.periodSeconds,
        treatMissingData: d.treatMissingData,
      });
    }
    const faster = defaultAlarms({ maxSendRate: 100, retryingTooLongSeconds: 120 });
    expect(faster.backlogTooLarge.threshold).toBe(100 * 1800);
    expect(faster.retryingTooLong.threshold).toBe(120);
    expect(faster.retriesStalled.threshold).toBe(DEFAULT_ALARMS.retriesStalled.threshold);
  });

  test('the two alarms added with the catalog: rate lease repairs and cancel errors warn on any', () => {
    expect(DEFAULT_ALARMS.rateLeaseRepairs).toMatchObject({ severity: 'warn', threshold: 0, datapointsToAlarm: 1 });
    expect(DEFAULT_ALARMS.cancelFunctionErrors).toMatchObject({ severity: 'warn', threshold: 0, datapointsToAlarm: 1 });
  });
});

describe('runbook sections of docs/operators.md', () => {
  test('every declared alarm has a "#### Alarm: <name>" section, and every section names a declared alarm', () => {
    const sections = runbookSections(OPERATORS);

    expect(ALARM_NAMES.filter((name) => !sections.includes(name))).toEqual([]);
    expect(sections.filter((name) => !(ALARM_NAMES as string[]).includes(name))).toEqual([]);
    expect(new Set(sections).size).toBe(sections.length);
  });

  test('the sections follow the catalog, in its order', () => {
    expect(runbookSections(OPERATORS)).toEqual(ALARM_NAMES);
  });

  test('each section opens with its facts line, from the declaration', () => {
    for (const name of ALARM_NAMES) {
      expect(OPERATORS).toContain(`#### Alarm: ${name}\n\n${runbookFacts(name)}\n\n`);
    }
    expect(runbookFacts('ambiguousSends')).toBe('_Warns · above 0 · 1 of 1 × 300 s · watches `AmbiguousSends`_');
    expect(runbookFacts('retriesStalled')).toBe(
      '_Pages · above 3600 s · 3 of 3 × 300 s · watches `RetryAgeSeconds` (max)_',
    );
  });

  test('a missing or stray section is found', () => {
    const doc = '#### Alarm: sesBounceRate\n\ntext\n\n#### Alarm: noSuchAlarm\n';

    expect(runbookSections(doc)).toEqual(['sesBounceRate', 'noSuchAlarm']);
  });
});

describe('the alarm table', () => {
  test('has a row per alarm linking its runbook anchor, with its defaults', () => {
    const rows = alarmTable().split('\n').slice(2);

    expect(rows).toHaveLength(ALARM_NAMES.length);
    ALARM_NAMES.forEach((name, i) => {
      const cells = rows[i]!.split('|').map((c) => c.trim());
      const d = DEFAULT_ALARMS[name];
      expect(cells.slice(1, 3)).toEqual([`[\`${name}\`](#${runbookAnchor(name)})`, d.severity]);
      expect(cells[5]).toBe(`${d.datapointsToAlarm} of ${d.evaluationPeriods} × ${d.periodSeconds} s`);
    });
  });

  test('writes thresholds in their unit, and names the setting a threshold follows', () => {
    expect(thresholdText(ALARM_CATALOG.sesComplaintRateWarning)).toBe('0.05 %');
    expect(thresholdText(ALARM_CATALOG.retriesStalled)).toBe('3600 s');
    expect(thresholdText(ALARM_CATALOG.functionErrors)).toBe('0');
    expect(thresholdText(ALARM_CATALOG.backlogTooLarge)).toBe(
      `\`maxSendRate\` × 1800 (${DEFAULTS.maxSendRate * 1800})`,
    );
  });

  test('every line is padded to the same width, as Prettier formats a table', () => {
    const widths = new Set(
      alarmTable()
        .split('\n')
        .map((line) => [...line].length),
    );

    expect(widths.size).toBe(1);
  });
});
