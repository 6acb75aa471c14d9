/**
 * `npm run docs:settings`: rewrites the settings table in README.md, between
 * `<!-- settings:start -->` and `<!-- settings:end -->`, from the declaration
 * (SETTINGS in lib/settings/declaration.ts). `npm run build` writes it too; a
 * unit test fails when the committed table is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { settingsTable } from '../../lib/settings';

export const README_FILE = path.join(__dirname, '..', '..', 'README.md');

export const TABLE_START = '<!-- settings:start -->';
export const TABLE_END = '<!-- settings:end -->';

/** `readme` with the text between the markers replaced by the declaration's table. */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md needs ${TABLE_START} and, after it, ${TABLE_END}`);
  return `${readme.slice(0, start + TABLE_START.length)}\n\n${settingsTable()}\n\n${readme.slice(end)}`;
}

/** Writes README.md with a fresh settings table; returns its path. */
export function writeSettingsTable(file = README_FILE): string {
  writeFileSync(file, withSettingsTable(readFileSync(file, 'utf8')));
  return file;
}

if (require.main === module) {
  console.log(`wrote the settings table in ${path.relative(process.cwd(), writeSettingsTable())}`);
}
