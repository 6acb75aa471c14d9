/**
 * The account must fail a run for the bugs the chaos suite hunts: a lost message, a duplicate
 * outside the ambiguous window, a duplicate no injected fault explains. Checked on made-up
 * evidence, so a checker that could never fail does not pass unnoticed.
 */
import type { MailboxEmail } from '../../tools/dev/local/emulators';
import type { DecisionEvent } from '../../tools/dev/local/pipeline';
import { account, type AccountInput, type Unit } from './account';

const unit = (n: number, key = `key-${n}`): Unit => ({
  id: `chaos-${n}`,
  recipient: `chaos-${n}@x.example.com`,
  expect: 'email',
  key,
});

function mail(n: number, messageId: string): MailboxEmail {
  return {
    messageId,
    from: 'noreply@example.com',
    replyTo: [],
    destination: { to: [`chaos-${n}@x.example.com`], cc: [], bcc: [] },
    subject: 'S',
    body: { text: 'T' },
    attachments: [],
    at: 0,
  };
}

const sent = (n: number, sesMessageId: string, consumer = 'pod-1'): DecisionEvent => ({
  consumer,
  decision: 'sent',
  dedupeKey: `key-${n}`,
  sesMessageId,
});

function input(overrides: Partial<AccountInput>): AccountInput {
  return {
    units: [],
    emails: [],
    letters: [],
    decisions: [],
    crashes: [],
    killed: [],
    linesAbout: () => [],
    ...overrides,
  };
}

test('one recorded send per key is a clean pass', () => {
  const result = account(input({ units: [unit(1)], emails: [mail(1, 'ses-1')], decisions: [sent(1, 'ses-1')] }));
  expect(result).toEqual(expect.objectContaining({ duplicates: 0, lost: 0, problems: [] }));
});

test('a message with neither an email nor a DLQ entry is lost', () => {
  const result = account(input({ units: [unit(1)] }));
  expect(result.lost).toBe(1);
  expect(result.problems).toEqual([expect.stringMatching(/^LOST chaos-1 \(key key-1/)]);
});

test('two sends both recorded as completed are a duplicate outside the ambiguous window', () => {
  const result = account(
    input({
      units: [unit(1)],
      emails: [mail(1, 'ses-1'), mail(1, 'ses-2')],
      decisions: [sent(1, 'ses-1'), sent(1, 'ses-2', 'pod-2')],
    }),
  );
  expect(result.duplicates).toBe(1);
  expect(result.problems).toEqual(
    expect.arrayContaining([expect.stringMatching(/^DUPLICATE OUTSIDE THE AMBIGUOUS WINDOW: key key-1/)]),
  );
});

test('an unrecorded duplicate with no injected fault on its key is unexplained', () => {
  const result = account(
    input({ units: [unit(1)], emails: [mail(1, 'ses-1'), mail(1, 'ses-2')], decisions: [sent(1, 'ses-2')] }),
  );
  expect(result.duplicateLog).toEqual([expect.objectContaining({ key: 'key-1', cause: 'UNEXPLAINED' })]);
  expect(result.problems).toEqual([
    expect.stringMatching(/^UNEXPLAINED DUPLICATE: key key-1/),
    '1 duplicates but only 0 ambiguous events',
  ]);
});

test('a duplicate after a crash-after-accept is attributed to that crash, by its SES MessageId', () => {
  const result = account(
    input({
      units: [unit(1), unit(2)],
      emails: [mail(1, 'ses-1'), mail(1, 'ses-2'), mail(2, 'ses-3')],
      decisions: [sent(1, 'ses-2', 'pod-2'), sent(2, 'ses-3')],
      crashes: [{ recipient: 'chaos-1@x.example.com', pod: 'pod-1', sesMessageId: 'ses-1' }],
      killed: [{ name: 'pod-1', forwarded: ['chaos-1@x.example.com'] }],
    }),
  );
  expect(result.problems).toEqual([]);
  expect(result.ambiguousEvents).toEqual({ 'crash-after-accept': 1 });
  expect(result.duplicateLog).toEqual([
    expect.objectContaining({ key: 'key-1', cause: 'crash-after-accept', pod: 'pod-1' }),
  ]);
});

test('a send whose completion write failed explains the copy that sent again after its claim expired', () => {
  const unwritten = { ...sent(1, 'ses-1'), completionWritten: false, error: 'TimeoutError: socket hang up' };
  const result = account(
    input({
      units: [unit(1)],
      emails: [mail(1, 'ses-1'), mail(1, 'ses-2')],
      decisions: [unwritten, sent(1, 'ses-2', 'pod-2')],
    }),
  );
  expect(result.problems).toEqual([]);
  expect(result.duplicateLog).toEqual([expect.objectContaining({ key: 'key-1', cause: 'completion-write-failed' })]);
});

test('a send a killed pod had in flight explains one duplicate, not two', () => {
  const result = account(
    input({
      units: [unit(1)],
      emails: [mail(1, 'ses-1'), mail(1, 'ses-2'), mail(1, 'ses-3')],
      decisions: [sent(1, 'ses-3', 'pod-2')],
      killed: [{ name: 'pod-1', forwarded: ['chaos-1@x.example.com'] }],
    }),
  );
  expect(result.duplicates).toBe(2);
  expect(result.duplicateLog.map((d) => d.cause).sort()).toEqual(['UNEXPLAINED', 'killed-in-flight']);
});
