/**
 * redactAddresses (lambdas/kernel/contract/address.ts): addresses in free text (SES's error messages,
 * which become logged reasons and DLQ attributes) are masked, in time linear in the text.
 */
import { redactAddresses } from '../../../../../lambdas/kernel/contract/address';

test('masks each address in a sentence, whatever surrounds it', () => {
  expect(redactAddresses('Email address is not verified: ada@example.com, "bob@example.org" <carl@x.example>')).toBe(
    'Email address is not verified: a***@example.com, "b***@example.org" <c***@x.example>',
  );
});

test('leaves an @ without something on both sides alone', () => {
  expect(redactAddresses('@mention, trailing@ and @ alone')).toBe('@mention, trailing@ and @ alone');
});

test('masks a run with several @ as one address, at its last @', () => {
  expect(redactAddresses('a@b@example.com')).toBe('a***@example.com');
});

/**
 * Milliseconds per call on `text`: calls repeated for at least 30 ms, the best of five such rounds
 * (a busy machine only ever adds time, so the best round is the closest to the work itself).
 */
function msPerCall(text: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round += 1) {
    const start = process.hrtime.bigint();
    let calls = 0;
    let elapsed = 0;
    do {
      redactAddresses(text);
      calls += 1;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    } while (elapsed < 30);
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

test('a long run without an @ takes time linear in its length: 4 times the text, well under 8 times the time', () => {
  // What a pattern like /X+@X+/ retries from every start (quadratic: 16 times the time for 4 times the text).
  const n = 20_000;
  const small = msPerCall('x'.repeat(n));
  const large = msPerCall('x'.repeat(4 * n));

  expect(large / small).toBeLessThan(8);
}, 60_000);
