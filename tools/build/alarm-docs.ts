/**
 * `npm run docs:alarms`: rewrites what docs/operators.md says of each alarm from the alarm catalog
 * (ALARM_CATALOG in lib/construct/monitoring/alarm-catalog.ts), between two pairs of markers:
 *
 *   `<!-- alarms:start -->` ... `<!-- alarms:end -->`       the alarm table, generated whole
 *   `<!-- runbooks:start -->` ... `<!-- runbooks:end -->`   the runbook sections, in catalog order:
 *       per declared alarm its heading `#### Alarm: <name>`, a generated facts line, then its prose
 *
 * The prose is written by hand and kept: it is what follows a section's heading and facts line, up
 * to the next section or the end marker. A declared alarm without prose gets RUNBOOK_PLACEHOLDER,
 * which a unit test rejects. A section whose alarm is not declared stops the generator, naming it:
 * dropping it would lose prose written by hand (after a rename, rename the heading too).
 * `npm run build` writes both; a unit test fails when the committed page is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ALARM_NAMES, alarmTable, runbookFacts } from '../../lib/construct/monitoring/alarm-catalog';

export const OPERATORS_DOC_FILE = path.join(__dirname, '..', '..', 'docs', 'operators.md');

export const ALARM_TABLE_START = '<!-- alarms:start -->';
export const ALARM_TABLE_END = '<!-- alarms:end -->';
export const RUNBOOKS_START = '<!-- runbooks:start -->';
export const RUNBOOKS_END = '<!-- runbooks:end -->';

/** The prose of a declared alarm whose runbook is not written yet; a unit test rejects it. */
export const RUNBOOK_PLACEHOLDER = '**Runbook to write**: what firing means, what to check, what to do.';

const HEADING = /^#### Alarm: (.*)$/;
/** A facts line as runbookFacts writes it, recognised so that it is replaced, not kept as prose. */
const FACTS_LINE = /^_(Pages|Warns) · .*_$/;

/** `doc` with the text between `start` and `end` replaced by `content`. */
function between(doc: string, start: string, end: string, content: string): string {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/operators.md needs ${start} and, after it, ${end}`);
  return `${doc.slice(0, from + start.length)}\n\n${content}\n\n${doc.slice(to)}`;
}

/** `doc` with the text between the table's markers replaced by the catalog's alarm table. */
export function withAlarmTable(doc: string): string {
  return between(doc, ALARM_TABLE_START, ALARM_TABLE_END, alarmTable());
}

/**
 * The runbook sections between the runbook markers of `doc`: alarm name -> prose written by hand
 * (trimmed, without the facts line), in the page's order. Refuses text before the first section
 * and a name with two sections: neither has a place in the generated block.
 */
export function runbookSections(doc: string): Map<string, string> {
  const from = doc.indexOf(RUNBOOKS_START);
  const to = doc.indexOf(RUNBOOKS_END);
  if (from < 0 || to < from)
    throw new Error(`docs/operators.md needs ${RUNBOOKS_START} and, after it, ${RUNBOOKS_END}`);
  const sections = new Map<string, string>();
  let name: string | undefined;
  let lines: string[] = [];
  const close = (): void => {
    if (name === undefined) {
      if (lines.join('').trim() !== '') {
        throw new Error(`text before the first "#### Alarm:" section, between the runbook markers: move it above them`);
      }
      return;
    }
    const body = lines.join('\n').trim().split('\n');
    if (FACTS_LINE.test(body[0] ?? '')) body.shift();
    sections.set(name, body.join('\n').trim());
  };
  for (const line of doc.slice(from + RUNBOOKS_START.length, to).split('\n')) {
    const heading = HEADING.exec(line);
    if (heading === null) {
      lines.push(line);
      continue;
    }
    close();
    name = heading[1]!.trim();
    if (sections.has(name)) throw new Error(`two runbook sections for ${name}: keep one`);
    lines = [];
  }
  close();
  return sections;
}

/**
 * `doc` with its runbook block rewritten from the catalog: one section per declared alarm, in
 * catalog order, each with its heading, its facts line and its prose (or RUNBOOK_PLACEHOLDER).
 */
export function withRunbooks(doc: string): string {
  const prose = runbookSections(doc);
  const stray = [...prose.keys()].filter((name) => !(ALARM_NAMES as string[]).includes(name));
  if (stray.length > 0) {
    throw new Error(
      `runbook sections for alarms not declared: ${stray.join(', ')} (rename the heading if the alarm was renamed, or delete the section)`,
    );
  }
  const sections = ALARM_NAMES.map(
    (name) => `#### Alarm: ${name}\n\n${runbookFacts(name)}\n\n${prose.get(name) || RUNBOOK_PLACEHOLDER}`,
  );
  return between(doc, RUNBOOKS_START, RUNBOOKS_END, sections.join('\n\n'));
}

/** `doc` with a fresh alarm table and runbook block. */
export function withAlarmDocs(doc: string): string {
  return withRunbooks(withAlarmTable(doc));
}

/** Writes docs/operators.md with a fresh alarm table and runbook block; returns its path. */
export function writeAlarmDocs(file = OPERATORS_DOC_FILE): string {
  writeFileSync(file, withAlarmDocs(readFileSync(file, 'utf8')));
  return file;
}

if (require.main === module) {
  console.log(`wrote the alarm table and runbook headings in ${path.relative(process.cwd(), writeAlarmDocs())}`);
}
