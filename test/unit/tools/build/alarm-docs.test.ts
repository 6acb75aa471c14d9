import { readFileSync } from 'node:fs';
import { alarmTable } from '../../../../lib/construct/monitoring/alarm-catalog';
import {
  ALARM_TABLE_END,
  ALARM_TABLE_START,
  OPERATORS_DOC_FILE,
  withAlarmTable,
} from '../../../../tools/build/alarm-docs';

describe('the alarm table of docs/operators.md', () => {
  test('the committed table is the one the catalog gives (run npm run docs:alarms)', () => {
    const doc = readFileSync(OPERATORS_DOC_FILE, 'utf8');

    expect(withAlarmTable(doc)).toBe(doc);
  });

  test('replaces what is between the markers and keeps the prose around them', () => {
    const doc = `# Alarms\n\nbefore\n\n${ALARM_TABLE_START}\n\n| stale |\n\n${ALARM_TABLE_END}\n\n#### Alarm: x\n`;

    expect(withAlarmTable(doc)).toBe(
      `# Alarms\n\nbefore\n\n${ALARM_TABLE_START}\n\n${alarmTable()}\n\n${ALARM_TABLE_END}\n\n#### Alarm: x\n`,
    );
  });

  test('a page without the markers is refused rather than left as it is', () => {
    expect(() => withAlarmTable('# Operators\n')).toThrow(
      `docs/operators.md needs ${ALARM_TABLE_START} and, after it, ${ALARM_TABLE_END}`,
    );
  });
});
