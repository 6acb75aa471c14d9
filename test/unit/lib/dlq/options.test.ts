/** The DLQ commands' shared options: the selector they build, how it is described and given as JSON, and a dry run's output. */
import { describeSelector, dryRun, selectorJson, selectorOf, type DlqOptions } from '../../../../lib/dlq/options';
import { capture } from '../../helpers';

/** The options of `dlq ...` with nothing selected; spread and add. */
const NONE: DlqOptions = { queue: 'send', json: false, summary: false, force: false };

test('no --code and no --key: no selector, an empty JSON selector', () => {
  expect(selectorOf(NONE)).toBeUndefined();
  expect(selectorJson(undefined)).toEqual({});
});

test('a selector holds only what was given', () => {
  expect(selectorOf({ ...NONE, code: 'InvalidJson' })).toEqual({ code: 'InvalidJson' });
  expect(selectorOf({ ...NONE, keys: ['a', 'b'] })).toEqual({ keys: ['a', 'b'] });
  expect(selectorJson({ code: 'InvalidJson', keys: ['a'] })).toEqual({ code: 'InvalidJson', keys: ['a'] });
});

test.each([
  [{ code: 'InvalidJson' }, 'code InvalidJson'],
  [{ keys: ['order-42'] }, 'key order-42'],
  [{ keys: ['a', 'b'] }, 'key a or b'],
  [{ code: 'InvalidJson', keys: ['a'] }, 'code InvalidJson and key a'],
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
