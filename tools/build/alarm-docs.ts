/**
 * `npm run docs:alarms`: rewrites the alarm table in docs/operators.md, between
 * `<!-- alarms:start -->` and `<!-- alarms:end -->`, from the alarm catalog
 * (ALARM_CATALOG in lib/construct/monitoring/alarm-catalog.ts). `npm run build` writes it
 * too; a unit test fails when the committed table is stale. The runbook sections below the
 * table are prose, written by hand: a unit test checks there is one per declared alarm.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { alarmTable } from '../../lib/construct/monitoring/alarm-catalog';

export const OPERATORS_DOC_FILE = path.join(__dirname, '..', '..', 'docs', 'operators.md');

export const ALARM_TABLE_START = '<!-- alarms:start -->';
export const ALARM_TABLE_END = '<!-- alarms:end -->';

/** `doc` with the text between the markers replaced by the catalog's alarm table. */
export function withAlarmTable(doc: string): string {
  const start = doc.indexOf(ALARM_TABLE_START);
  const end = doc.indexOf(ALARM_TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`docs/operators.md needs ${ALARM_TABLE_START} and, after it, ${ALARM_TABLE_END}`);
  }
  return `${doc.slice(0, start + ALARM_TABLE_START.length)}\n\n${alarmTable()}\n\n${doc.slice(end)}`;
}

/** Writes docs/operators.md with a fresh alarm table; returns its path. */
export function writeAlarmTable(file = OPERATORS_DOC_FILE): string {
  writeFileSync(file, withAlarmTable(readFileSync(file, 'utf8')));
  return file;
}

if (require.main === module) {
  console.log(`wrote the alarm table in ${path.relative(process.cwd(), writeAlarmTable())}`);
}
