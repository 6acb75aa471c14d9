import { readFileSync } from 'node:fs';
import { SETTINGS, settingsTable } from '../../lib/settings';
import { README_FILE, TABLE_END, TABLE_START, withSettingsTable } from '../../tools/build/settings-docs';

describe('README settings table', () => {
  test('the committed table is the one the declaration gives (run npm run docs:settings)', () => {
    const readme = readFileSync(README_FILE, 'utf8');

    expect(withSettingsTable(readme)).toBe(readme);
  });

  test('has a row per declared setting, with its default', () => {
    const table = settingsTable();

    for (const name of Object.keys(SETTINGS)) expect(table).toContain(`| \`${name}\` `);
    expect(table).toMatch(/\| `retentionPeriodSeconds` +\| 345600 \(4 days\) +\|/);
    expect(table).toMatch(/\| `failOpen` +\| `false` +\|/);
  });

  test('a README without the markers is refused rather than left as it is', () => {
    expect(() => withSettingsTable('# README\n')).toThrow(`README.md needs ${TABLE_START} and, after it, ${TABLE_END}`);
  });
});
