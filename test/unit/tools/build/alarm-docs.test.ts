import { readFileSync } from 'node:fs';
import { ALARM_NAMES, alarmTable, runbookFacts } from '../../../../lib/construct/monitoring/alarm-catalog';
import {
  ALARM_TABLE_END,
  ALARM_TABLE_START,
  OPERATORS_DOC_FILE,
  RUNBOOK_PLACEHOLDER,
  RUNBOOKS_END,
  RUNBOOKS_START,
  runbookSections,
  withAlarmDocs,
  withAlarmTable,
  withRunbooks,
} from '../../../../tools/build/alarm-docs';

const OPERATORS = readFileSync(OPERATORS_DOC_FILE, 'utf8');

/** A page with both blocks, its runbook block holding `runbooks`. */
const page = (runbooks: string): string =>
  `# Alarms\n\n${ALARM_TABLE_START}\n\n${ALARM_TABLE_END}\n\n### Runbooks\n\nintro\n\n${RUNBOOKS_START}\n\n${runbooks}\n\n${RUNBOOKS_END}\n\n## After\n`;

/** Prose for every declared alarm, as a runbook block written by hand. */
const allWritten = (): string =>
  ALARM_NAMES.map((name) => `#### Alarm: ${name}\n\nWhat to do for ${name}.`).join('\n\n');

describe('docs/operators.md as the generator writes it', () => {
  test('the committed page is the one the catalog gives: table and runbook headings (run npm run docs:alarms)', () => {
    expect(withAlarmDocs(OPERATORS)).toBe(OPERATORS);
  });

  test('every declared alarm has its runbook written (no placeholder left)', () => {
    const sections = runbookSections(OPERATORS);

    expect(ALARM_NAMES.filter((name) => !sections.get(name) || sections.get(name) === RUNBOOK_PLACEHOLDER)).toEqual([]);
  });
});

describe('the alarm table', () => {
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

describe('the runbook block', () => {
  test('writes each declared alarm in catalog order: heading, facts line, the prose kept', () => {
    const reversed = ALARM_NAMES.map((name) => `#### Alarm: ${name}\n\nWhat to do for ${name}.\n\nMore.`)
      .reverse()
      .join('\n\n');

    const expected = ALARM_NAMES.map(
      (name) => `#### Alarm: ${name}\n\n${runbookFacts(name)}\n\nWhat to do for ${name}.\n\nMore.`,
    ).join('\n\n');
    expect(withRunbooks(page(reversed))).toBe(page(expected));
  });

  test('replaces a stale facts line rather than keeping it as prose, and is stable', () => {
    const stale = allWritten().replace(
      `#### Alarm: ${ALARM_NAMES[0]}\n\n`,
      `#### Alarm: ${ALARM_NAMES[0]}\n\n_Pages · above 42 · 9 of 9 × 60 s · watches nothing_\n\n`,
    );

    const once = withRunbooks(page(stale));
    expect(once).not.toContain('above 42');
    expect(withRunbooks(once)).toBe(once);
  });

  test('a declared alarm without prose gets the placeholder, with its heading and facts line', () => {
    const [first, ...rest] = ALARM_NAMES;
    const without = rest.map((name) => `#### Alarm: ${name}\n\nWhat to do for ${name}.`).join('\n\n');

    const written = withRunbooks(page(without));
    expect(written).toContain(`#### Alarm: ${first}\n\n${runbookFacts(first!)}\n\n${RUNBOOK_PLACEHOLDER}\n\n`);
    expect(runbookSections(written).get(first!)).toBe(RUNBOOK_PLACEHOLDER);
  });

  test('a section for an alarm not declared stops the generator, naming it', () => {
    const doc = page(`${allWritten()}\n\n#### Alarm: noSuchAlarm\n\nOld prose.`);

    expect(() => withRunbooks(doc)).toThrow('runbook sections for alarms not declared: noSuchAlarm');
  });

  test('two sections for one alarm, or text before the first section, are refused', () => {
    const name = ALARM_NAMES[0]!;

    expect(() => withRunbooks(page(`${allWritten()}\n\n#### Alarm: ${name}\n\nAgain.`))).toThrow(
      `two runbook sections for ${name}`,
    );
    expect(() => withRunbooks(page(`Stray text.\n\n${allWritten()}`))).toThrow('text before the first');
  });

  test('a page without the runbook markers is refused', () => {
    expect(() => withRunbooks('# Operators\n')).toThrow(
      `docs/operators.md needs ${RUNBOOKS_START} and, after it, ${RUNBOOKS_END}`,
    );
  });
});
