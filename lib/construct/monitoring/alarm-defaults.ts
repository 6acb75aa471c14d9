/**
 * Every alarm's default severity, threshold and evaluation, read from the alarm catalog for the
 * resolved settings, and where the runbook sections are.
 */
import { docsUrl } from '../../package-info';
import { DEFAULTS } from '../../settings';
import { ALARM_CATALOG, ALARM_NAMES, declaredThreshold, runbookAnchor, type AlarmName } from './alarm-catalog';
import type { AlarmDefaults, AlarmSettings } from './alarm-declaration';

export { ALARM_NAMES, runbookAnchor };
export { DEAD_LETTER_AGE_MARGIN_SECONDS } from './warning-alarms';

/** The defaults of every alarm for these settings (`maxSendRate`, `retryingTooLongSeconds` decide two). */
export function defaultAlarms(settings: AlarmSettings): Readonly<Record<AlarmName, AlarmDefaults>> {
  return Object.fromEntries(
    ALARM_NAMES.map((name) => {
      const d = ALARM_CATALOG[name];
      const defaults: AlarmDefaults = {
        severity: d.severity,
        threshold: declaredThreshold(d, settings),
        evaluationPeriods: d.evaluationPeriods,
        datapointsToAlarm: d.datapointsToAlarm,
        periodSeconds: d.periodSeconds,
        treatMissingData: d.treatMissingData,
      };
      return [name, defaults];
    }),
  ) as Record<AlarmName, AlarmDefaults>;
}

/** Defaults of every alarm with the default settings, for documentation and tests. */
export const DEFAULT_ALARMS: Readonly<Record<AlarmName, AlarmDefaults>> = defaultAlarms(DEFAULTS);

/**
 * Where runbook links point by default: the operators' guide (docs/operators.md, one section per
 * alarm) at the installed version's tag in the package's repository, so each alarm links the
 * runbook of the alarm it is. The same file ships in the package (`node_modules/exactly-once-email/
 * docs/operators.md`): copy it to your wiki and set `runbookUrl` there to follow your own changes.
 */
export const DEFAULT_RUNBOOK_URL = docsUrl('docs/operators.md');
