/**
 * `npm run docs:settings`: rewrites the settings table in docs/settings.md, between
 * `<!-- settings:start -->` and `<!-- settings:end -->`, from the declaration
 * (SETTINGS in lib/settings/declaration.ts). `npm run build` writes it too; a
 * unit test fails when the committed table is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { settingsTable } from '../../lib/settings';

export const SETTINGS_DOC_FILE = path.join(__dirname, '..', '..', 'docs', 'settings.md');

export const TABLE_START = '<!-- settings:start -->';
export const TABLE_END = '<!-- settings:end -->';

/** `doc` with the text between the markers replaced by the declaration's table. */
export function withSettingsTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/settings.md needs ${TABLE_START} and, after it, ${TABLE_END}`);
  return `${doc.slice(0, start + TABLE_START.length)}\n\n${settingsTable()}\n\n${doc.slice(end)}`;
}

/** Writes docs/settings.md with a fresh settings table; returns its path. */
export function writeSettingsTable(file = SETTINGS_DOC_FILE): string {
  writeFileSync(file, withSettingsTable(readFileSync(file, 'utf8')));
  return file;
}

if (require.main === module) {
  console.log(`wrote the settings table in ${path.relative(process.cwd(), writeSettingsTable())}`);
}
