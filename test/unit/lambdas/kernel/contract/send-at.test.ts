import {
  InvalidMessageError,
  readSendAt,
  sendAtRangeProblem,
  validateEmail,
} from '../../../../../lambdas/kernel/contract';

const message = { to: 'ada@example.com', subject: 'Hi', text: 'Hello' };

function issues(sendAt: unknown): string[] {
  try {
    validateEmail({ ...message, sendAt });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return (error as InvalidMessageError).issues.map((i) => `${i.field}: ${i.reason}`);
  }
  return [];
}

describe('sendAt: format (contract v1.2)', () => {
  test.each([
    '2026-12-24T08:00:00Z',
    '2026-12-24T09:00:00+01:00',
    '2026-12-24T08:00:00.123456789Z',
    '2028-02-29T00:00:00-05:30',
  ])('an RFC 3339 date-time with an offset is taken as written: %s', (sendAt) => {
    expect(validateEmail({ ...message, sendAt }).sendAt).toBe(sendAt);
  });

  test('a message without sendAt has none', () => {
    expect(validateEmail(message)).not.toHaveProperty('sendAt');
  });

  test.each([
    ['2026-12-24 08:00:00Z', 'a space for T'],
    ['2026-12-24T08:00:00', 'no offset (a local time)'],
    ['2026-12-24T08:00Z', 'no seconds'],
    ['2026-12-24t08:00:00z', 'lower-case t and z'],
    ['2026-13-01T00:00:00Z', 'month 13'],
    ['2026-12-24T24:00:00Z', 'hour 24'],
    ['1735000000', 'epoch seconds'],
    ['', 'empty'],
  ])('%s is refused (%s), naming the field and the format', (sendAt) => {
    expect(issues(sendAt)).toEqual([
      'sendAt: must be an RFC 3339 date-time with an offset, e.g. 2026-12-24T08:00:00Z or 2026-12-24T09:00:00+01:00',
    ]);
  });

  test('a day the calendar does not have is refused', () => {
    expect(issues('2026-02-29T00:00:00Z')).toEqual(['sendAt: names no calendar day (2026-02-29)']);
  });

  test('a year out of 2000..2099 is refused', () => {
    expect(issues('2100-01-01T00:00:00Z')).toEqual(['sendAt: must be a time from 2000 to 2099']);
  });

  test('a sendAt that is not a string is refused', () => {
    expect(issues(1735000000)).toEqual(['sendAt: must be a string, got a number']);
  });

  test('readSendAt gives the instant, offsets applied', () => {
    expect(readSendAt('2026-12-24T09:00:00+01:00')).toEqual({ ok: true, ms: Date.UTC(2026, 11, 24, 8) });
  });
});

describe('sendAt: range (maxScheduleAheadSeconds)', () => {
  const published = Date.UTC(2026, 11, 24, 8);

  test('up to maxScheduleAheadSeconds after publishing is within range, to the second', () => {
    expect(sendAtRangeProblem(published + 86_400_000, published, 86_400)).toBeUndefined();
  });

  test('a past sendAt is within range: it sends at once', () => {
    expect(sendAtRangeProblem(published - 3_600_000, published, 86_400)).toBeUndefined();
  });

  test('beyond maxScheduleAheadSeconds is refused, naming the setting and how far it was', () => {
    expect(sendAtRangeProblem(published + 86_401_000, published, 86_400)).toBe(
      'must be at most 86400 s after the message was published (maxScheduleAheadSeconds), got 86401 s',
    );
  });

  test('with maxScheduleAheadSeconds=0 any future sendAt is refused', () => {
    expect(sendAtRangeProblem(published + 1000, published, 0)).toContain('does not schedule');
    expect(sendAtRangeProblem(published, published, 0)).toBeUndefined();
  });
});
