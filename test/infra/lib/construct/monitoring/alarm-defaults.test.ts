/** Every default alarm has its runbook in docs/operators.md, linked from the alarm and listed in the alarm table with its defaults. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALARM_NAMES, DEFAULT_ALARMS, runbookAnchor } from '../../../../../lib/construct/monitoring/alarm-defaults';

describe('runbooks in docs/operators.md', () => {
  const guide = fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', '..', 'docs', 'operators.md'), 'utf8');

  test.each(ALARM_NAMES)('%s has a runbook section the alarm links to', (name) => {
    // GitHub's anchor of "#### Alarm: name" is "alarm-<name in lower case>".
    expect(guide).toContain(`\n#### Alarm: ${name}\n`);
    expect(runbookAnchor(name)).toBe(`alarm-${name.toLowerCase()}`);
  });

  test.each(ALARM_NAMES)('%s is in the alarm table with its default severity and datapoints', (name) => {
    const d = DEFAULT_ALARMS[name];
    const row = guide.split('\n').find((l) => l.startsWith(`| [\`${name}\`](#${runbookAnchor(name)}) `));
    expect(row).toBeDefined();
    const cells = row!.split('|').map((c) => c.trim());
    expect(cells[2]).toBe(d.severity);
    expect(cells[5]).toBe(`${d.datapointsToAlarm} of ${d.evaluationPeriods} × ${d.periodSeconds} s`);
  });
});
