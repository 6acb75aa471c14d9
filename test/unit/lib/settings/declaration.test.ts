/** The one declaration of every setting: consistent with itself, and what the README's table is made of. */
import {
  defaultText,
  SETTINGS,
  settingsTable,
  valueDefaults,
  type SettingDeclaration,
} from '../../../../lib/settings/declaration';

const DECLARED = Object.entries(SETTINGS) as [string, SettingDeclaration][];

test('no two settings write the same environment variable', () => {
  const variables = DECLARED.flatMap(([, d]) => (d.env !== undefined ? [d.env] : []));
  expect(variables.length).toBeGreaterThan(10);
  expect(new Set(variables).size).toBe(variables.length);
});

test('every default of one value has the declared kind and lies within the bounds', () => {
  const wrong = DECLARED.filter(([, d]) => typeof d.default !== 'object').flatMap(([name, d]) => {
    const value = d.default;
    const kindOk =
      d.kind === 'integer'
        ? Number.isSafeInteger(value)
        : d.kind === 'boolean'
          ? typeof value === 'boolean'
          : typeof value === 'string';
    const inBounds =
      d.bounds === undefined || typeof value !== 'number' || (value >= d.bounds.min && value <= d.bounds.max);
    return kindOk && inBounds ? [] : [name];
  });
  expect(wrong).toEqual([]);
});

test('bounds are declared on integers only, low to high', () => {
  const wrong = DECLARED.filter(
    ([, d]) => d.bounds !== undefined && (d.kind !== 'integer' || d.bounds.min > d.bounds.max),
  );
  expect(wrong.map(([name]) => name)).toEqual([]);
});

test('valueDefaults holds the one-value defaults and leaves the described ones out', () => {
  const defaults = valueDefaults() as Record<string, unknown>;
  for (const [name, d] of DECLARED) {
    if (typeof d.default === 'object') expect(defaults).not.toHaveProperty(name);
    else expect(defaults[name]).toBe(d.default);
  }
});

test('defaultText shows numbers plain, other values as code, described ones as written, with the note', () => {
  const base = { kind: 'integer', notes: '', contextKey: true } as const;
  expect(defaultText({ ...base, default: 14 })).toBe('14');
  expect(defaultText({ ...base, kind: 'boolean', default: false })).toBe('`false`');
  expect(defaultText({ ...base, default: 14, defaultNote: 'per second' })).toBe('14 (per second)');
  expect(defaultText({ ...base, kind: 'string', default: { described: 'the stack name' } })).toBe('the stack name');
});

test('the settings table has a row per setting, every row as wide as the header', () => {
  const lines = settingsTable().split('\n');
  expect(lines).toHaveLength(DECLARED.length + 2);
  for (const [name] of DECLARED) expect(lines.some((l) => l.startsWith(`| \`${name}\``))).toBe(true);
  const width = [...lines[0]!].length;
  expect(lines.filter((l) => [...l].length !== width)).toEqual([]);
});
