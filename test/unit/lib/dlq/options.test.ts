/** The DLQ commands' shared options: the selector they build, how it is described and given as JSON, and a dry run's output. */
import { describeSelector, dryRun, selectorJson, selectorOf, type DlqOptions } from '../../../../lib/dlq/options';
import { capture } from '../../helpers';

/** The options of `dlq ...` with nothing selected; spread and add. */
const NONE: DlqOptions = { queue: 'send', json: false, summary: false, force: false };

test('no --code, no --key and no --team: no selector, an empty JSON selector', () => {
  expect(selectorOf(NONE)).toBeUndefined();
  expect(selectorJson(undefined)).toEqual({});
});

test('a selector holds only what was given', () => {
  expect(selectorOf({ ...NONE, code: 'InvalidJson' })).toEqual({ code: 'InvalidJson' });
  expect(selectorOf({ ...NONE, keys: ['a', 'b'] })).toEqual({ keys: ['a', 'b'] });
  expect(selectorJson({ code: 'InvalidJson', keys: ['a'] })).toEqual({ code: 'InvalidJson', keys: ['a'] });
  expect(selectorOf({ ...NONE, team: 'billing' })).toEqual({ team: 'billing' });
  expect(selectorJson({ team: 'billing', code: 'InvalidJson' })).toEqual({ team: 'billing', code: 'InvalidJson' });
});

test.each([
  [{ code: 'InvalidJson' }, 'with code InvalidJson'],
  [{ keys: ['order-42'] }, 'with key order-42'],
  [{ keys: ['a', 'b'] }, 'with key a or b'],
  [{ code: 'InvalidJson', keys: ['a'] }, 'with code InvalidJson and key a'],
  [{ team: 'billing' }, 'of team billing'],
  [{ team: 'billing', code: 'InvalidJson' }, 'of team billing with code InvalidJson'],
  // A team's keys name their team already.
  [{ team: 'billing', keys: ['billing#order-42'] }, 'with key billing#order-42'],
])('%j is described as "%s"', (selector, text) => {
  expect(describeSelector(selector)).toBe(text);
});

test('a described key cannot break the line it is printed on', () => {
  expect(describeSelector({ keys: ['a\nemail-pipeline: done'] })).not.toContain('\n');
});

test('a dry run with --json prints one object, marked as a dry run', () => {
  const c = capture();
  dryRun(c.io, { ...NONE, json: true }, { deleted: 0 }, [], 'Would delete 0 messages.');
  expect(c.out).toHaveLength(1);
  expect(JSON.parse(c.out[0]!)).toEqual({ deleted: 0, dryRun: true });
});

test('a dry run as text ends by saying nothing was changed', () => {
  const c = capture();
  dryRun(c.io, NONE, {}, [], 'Would delete 0 messages.');
  expect(c.out).toEqual(['Would delete 0 messages. Nothing was changed (--dry-run).']);
});
