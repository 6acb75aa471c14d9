/**
 * Confirm before resend, its pure parts: which overwritten claim means an unknown fate, and
 * when an unknown-fate send looks for its SES event again.
 */
import { lostAttemptAt } from '../../../../../lambdas/send-email/claim/persistence';
import { confirmationRetrySeconds } from '../../../../../lambdas/send-email/confirm';
import { readConfirmSettings } from '../../../../../lambdas/kernel/environment';

describe('lostAttemptAt', () => {
  test('a completed or expired record is no lost attempt', () => {
    expect(lostAttemptAt({ status: 'COMPLETED', in_progress_expiration: 5 })).toBeUndefined();
    expect(lostAttemptAt({ status: 'EXPIRED' })).toBeUndefined();
  });
  test('a claim released on an ambiguous send carries its attempt time', () => {
    expect(lostAttemptAt({ status: 'INPROGRESS', in_progress_expiration: 0, sendAttemptAt: 1234 })).toBe(1234);
  });
  test('a claim that died with its invocation: its attempt ended by the in-progress expiry', () => {
    expect(lostAttemptAt({ status: 'INPROGRESS', in_progress_expiration: 99_000 })).toBe(99_000);
  });
});

describe('confirmationRetrySeconds', () => {
  test('looks again soon (a tenth of the grace), then when the grace ends: two receives at most', () => {
    expect(confirmationRetrySeconds(0, 300)).toBe(30);
    expect(confirmationRetrySeconds(10_000, 300)).toBe(20);
    expect(confirmationRetrySeconds(30_000, 300)).toBe(270);
    expect(confirmationRetrySeconds(299_500, 300)).toBe(1);
  });
});

describe('readConfirmSettings', () => {
  test('reads the grace; confirmation is off without a ledger table', () => {
    expect(readConfirmSettings({ SEND_CONFIRMATION_GRACE_SECONDS: '300' }, 60)).toEqual({
      graceSeconds: 300,
      retentionSeconds: 60,
    });
    expect(readConfirmSettings({ LEDGER_TABLE_NAME: 'l', SEND_CONFIRMATION_GRACE_SECONDS: '15' }, 60)).toEqual({
      ledgerTableName: 'l',
      graceSeconds: 15,
      retentionSeconds: 60,
    });
  });
  test('a missing grace is refused, naming the variable (the declaration holds its default)', () => {
    expect(() => readConfirmSettings({}, 60)).toThrow(/SEND_CONFIRMATION_GRACE_SECONDS/);
  });
  test('a bad grace is refused, naming the variable', () => {
    expect(() => readConfirmSettings({ SEND_CONFIRMATION_GRACE_SECONDS: '0' }, 60)).toThrow(
      /SEND_CONFIRMATION_GRACE_SECONDS must be a positive integer, got "0"/,
    );
  });
});
