import { readFileSync } from 'node:fs';
import { SETTINGS, settingsTable } from '../../../../lib/settings';
import { SETTINGS_DOC_FILE, TABLE_END, TABLE_START, withSettingsTable } from '../../../../tools/build/settings-docs';

describe('the settings table of docs/settings.md', () => {
  test('the committed table is the one the declaration gives (run npm run docs:settings)', () => {
    const doc = readFileSync(SETTINGS_DOC_FILE, 'utf8');

    expect(withSettingsTable(doc)).toBe(doc);
  });

  test('has a row per declared setting, with its default', () => {
    const table = settingsTable();

    for (const name of Object.keys(SETTINGS)) expect(table).toContain(`| \`${name}\` `);
    expect(table).toMatch(/\| `retentionPeriodSeconds` +\| 345600 \(4 days\) +\|/);
    expect(table).toMatch(/\| `failOpen` +\| `false` +\|/);
  });

  test('a page without the markers is refused rather than left as it is', () => {
    expect(() => withSettingsTable('# Settings\n')).toThrow(
      `docs/settings.md needs ${TABLE_START} and, after it, ${TABLE_END}`,
    );
  });
});
