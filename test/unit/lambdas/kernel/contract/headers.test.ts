/** The contract's custom headers: which names and values are refused, and that the rest pass through. */
import { HEADER_LIMITS, readHeaders } from '../../../../../lambdas/kernel/contract/headers';

/** readHeaders on `value`: the headers it keeps and the issues it reports. */
function read(value: unknown): { headers: Record<string, string> | undefined; issues: Array<[string, string]> } {
  const issues: Array<[string, string]> = [];
  const headers = readHeaders((field, reason) => issues.push([field, reason]), value);
  return { headers, issues };
}

test('no headers: nothing kept, nothing reported', () => {
  expect(read(undefined)).toEqual({ headers: undefined, issues: [] });
});

test('valid headers pass through unchanged', () => {
  expect(read({ 'X-Campaign': 'winter', 'List-Unsubscribe': '<https://example.com/u>' })).toEqual({
    headers: { 'X-Campaign': 'winter', 'List-Unsubscribe': '<https://example.com/u>' },
    issues: [],
  });
});

test.each([null, ['X-A', 'b'], 'X-A: b'])('%j is not an object of headers', (value) => {
  const { headers, issues } = read(value);
  expect(headers).toBeUndefined();
  expect(issues).toEqual([['headers', expect.stringContaining('must be an object of name -> value')]]);
});

test.each([
  ['Subject', 'is set by SES or the pipeline'],
  ['content-type', 'is set by SES or the pipeline'],
  ['X-SES-Tenant', 'is set by SES or the pipeline'],
  ['Disposition-Notification-To', 'read receipt'],
  ['Errors-To', 'bounces'],
  ['Resent-From', 'Resent- fields'],
  ['Received-SPF', 'trace field'],
  ['Bad Name', 'printable ASCII characters without spaces or a colon'],
  ['X:Colon', 'printable ASCII characters without spaces or a colon'],
])('the name %s is refused (%s), and only that header is dropped', (name, reason) => {
  const { headers, issues } = read({ [name]: 'x', 'X-Kept': 'yes' });
  expect(issues).toEqual([[`headers.${name}`, expect.stringContaining(reason)]]);
  expect(headers).toEqual({ 'X-Kept': 'yes' });
});

test('a name given twice in another case is refused the second time', () => {
  const { headers, issues } = read({ 'X-Tag': 'a', 'x-tag': 'b' });
  expect(issues).toEqual([['headers.x-tag', expect.stringContaining('given twice')]]);
  expect(headers).toEqual({ 'X-Tag': 'a' });
});

test.each([
  [42, 'must be a string'],
  ['a\r\nBcc: eve@example.com', 'CR or LF'],
  ['café', 'printable ASCII'],
  ['   ', 'must not be empty'],
  ['x'.repeat(HEADER_LIMITS.maxValueLength + 1), `at most ${HEADER_LIMITS.maxValueLength}`],
])('the value %j is refused', (value, reason) => {
  expect(read({ 'X-A': value }).issues).toEqual([['headers.X-A', expect.stringContaining(reason)]]);
});

test(`at most ${HEADER_LIMITS.maxHeaders} headers`, () => {
  const many = Object.fromEntries(Array.from({ length: HEADER_LIMITS.maxHeaders + 1 }, (_, i) => [`X-H${i}`, 'v']));
  expect(read(many).issues).toContainEqual(['headers', `must have at most ${HEADER_LIMITS.maxHeaders} entries`]);
  const enough = Object.fromEntries(Object.entries(many).slice(1));
  expect(read(enough).issues).toEqual([]);
});

test('a header named __proto__ stays a header', () => {
  const headers = read(JSON.parse('{"__proto__": "x"}')).headers!;
  expect(Object.keys(headers)).toEqual(['__proto__']);
  expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
});
