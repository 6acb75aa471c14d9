/**
 * SNS Number attributes by their value (lambdas/kernel/contract/sns-number.ts): the canonical text of a
 * Number key, worked out on decimal digits.
 */
import { canonicalNumber, SNS_NUMBER } from '../../../../../lambdas/kernel/contract/sns-number';

function canonical(text: string): string | undefined {
  const result = canonicalNumber(text);
  return result.ok ? result.value : undefined;
}

test.each([
  ['1e3', '1000'],
  ['1000.0', '1000'],
  ['+1000', '1000'],
  ['0001000.000', '1000'],
  ['1.5', '1.5'],
  ['.5', '0.5'],
  ['5.', '5'],
  ['-12.50e-1', '-1.25'],
  ['1E-3', '0.001'],
  ['123.456e2', '12345.6'],
  ['42', '42'],
])('%s is written %s', (text, expected) => {
  expect(canonical(text)).toBe(expected);
});

test.each(['0', '-0', '+0.000', '0e99999999999999999999', '.0'])('zero written as %s is 0', (text) => {
  expect(canonical(text)).toBe('0');
});

test('values that differ in the 20th significant digit stay apart (a double would make them one)', () => {
  expect(Number('12345678901234567890')).toBe(Number('12345678901234567891'));

  expect(canonical('12345678901234567890')).toBe('12345678901234567890');
  expect(canonical('12345678901234567891')).toBe('12345678901234567891');
});

test(`${SNS_NUMBER.maxDigits} significant digits are taken, trailing zeros not counted`, () => {
  expect(canonical(`${'9'.repeat(38)}000`)).toBe(`${'9'.repeat(38)}000`);
});

test(`more than ${SNS_NUMBER.maxDigits} significant digits are refused`, () => {
  expect(canonicalNumber('1'.repeat(39))).toEqual({ ok: false, reason: expect.stringContaining('at most 38') });
});

test('the largest magnitude SNS takes, 10^126, is written out in full', () => {
  expect(canonical('1e126')).toBe(`1${'0'.repeat(126)}`);
  expect(canonical('-1e126')).toBe(`-1${'0'.repeat(126)}`);
});

test.each(['1.1e126', '1e127', '-1e127'])('%s, over 10^126 in magnitude, is refused', (text) => {
  expect(canonicalNumber(text).ok).toBe(false);
});

test('the smallest magnitude SNS takes, 10^-128, is written out in full', () => {
  expect(canonical('1e-128')).toBe(`0.${'0'.repeat(127)}1`);
});

test('under 10^-128 in magnitude is refused', () => {
  expect(canonicalNumber('9.99e-129').ok).toBe(false);
});

test('a huge exponent is refused without expanding it', () => {
  expect(canonicalNumber(`1e${'9'.repeat(1000)}`)).toEqual({ ok: false, reason: expect.stringContaining('10^126') });
});

test('the longest canonical text within the range stays under the key limit of 256 characters', () => {
  expect(canonical(`-${'9'.repeat(38)}e-165`)).toHaveLength(168);
});

test.each(['', ' 1', '1 ', '1,000', '0x10', 'Infinity', 'NaN', '1e', '--1', '1.2.3', '.', 'e5'])(
  '%j is no number',
  (text) => {
    expect(canonicalNumber(text)).toEqual({ ok: false, reason: 'must be a decimal number, like 42, -1.5 or 1e3' });
  },
);
