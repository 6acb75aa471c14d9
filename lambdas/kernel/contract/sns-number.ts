/**
 * SNS Number message attributes by their value: `1e3`, `1000`, `1000.0` and `+1000` are one number,
 * and so one dedupe key. Worked out on the decimal digits (the exponent as a BigInt), never through
 * a float, which would make `12345678901234567890` and `12345678901234567891` one key. Pure, no I/O.
 */

/** What SNS takes as a Number: up to 38 significant digits, magnitudes from 10^-128 to 10^126 (and 0). */
export const SNS_NUMBER = { maxDigits: 38, minExponent: -128, maxExponent: 126 } as const;

const NUMBER = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

export type CanonicalNumber =
  { readonly ok: true; readonly value: string } | { readonly ok: false; readonly reason: string };

const RANGE = `at most ${SNS_NUMBER.maxDigits} significant digits, between 10^${SNS_NUMBER.minExponent} and 10^${SNS_NUMBER.maxExponent} in magnitude`;

/**
 * The canonical text of a number as SNS writes Numbers in (`-12.5e-1`, `1E3`, `0.50`): plain decimal
 * notation, no exponent, no `+`, no leading zeros but one before the point, no trailing zeros after it
 * (`-1.25`, `1000`, `0.5`; zero is `0`). At most 168 characters within SNS's range. A text SNS would not
 * take as a Number is refused with the reason.
 */
export function canonicalNumber(text: string): CanonicalNumber {
  const match = NUMBER.exec(text);
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match ?? [];
  if (!match || whole + fraction === '') {
    return { ok: false, reason: 'must be a decimal number, like 42, -1.5 or 1e3' };
  }
  const written = (whole + fraction).replace(/^0+/, '');
  if (written === '') return { ok: true, value: '0' };
  const digits = written.replace(/0+$/, '');
  // value = digits x 10^scale
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(written.length - digits.length);
  // The power of ten of the leading digit: the value is in [10^leading, 10^(leading + 1)).
  const leading = scale + BigInt(digits.length - 1);
  const tooLarge =
    leading > BigInt(SNS_NUMBER.maxExponent) || (leading === BigInt(SNS_NUMBER.maxExponent) && digits !== '1');
  if (digits.length > SNS_NUMBER.maxDigits || leading < BigInt(SNS_NUMBER.minExponent) || tooLarge) {
    return { ok: false, reason: `must be a number SNS accepts: ${RANGE}` };
  }
  const shift = Number(scale);
  const point = digits.length + shift;
  const plain =
    shift >= 0
      ? digits + '0'.repeat(shift)
      : point > 0
        ? `${digits.slice(0, point)}.${digits.slice(point)}`
        : `0.${'0'.repeat(-point)}${digits}`;
  return { ok: true, value: sign === '-' ? `-${plain}` : plain };
}
