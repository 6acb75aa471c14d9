/**
 * Which SES events the ledger believes (lambdas/kernel/ledger/binding.ts): only the pipeline's own
 * origin, and only events bound to an attempt its claim recorded, of that attempt's message.
 */
import {
  bindingProblem,
  claimEvidence,
  claimRecordId,
  claimRef,
  keyTeam,
  originProblem,
  type ClaimEvidence,
  type TrustedOrigin,
} from '../../../../../lambdas/kernel/ledger/binding';
import { idempotencyRecordId } from '../../../../../lambdas/status/lookup';

const TRUSTED: TrustedOrigin = {
  accountId: '111122223333',
  configurationSetName: 'email-pipeline',
  senderRoleName: 'SendFunctionRole-abc',
};
const FROM_PIPELINE = {
  source: 'aws.ses',
  busAccount: TRUSTED.accountId,
  accountId: TRUSTED.accountId,
  configurationSet: TRUSTED.configurationSetName,
  callerIdentity: TRUSTED.senderRoleName,
};

describe('origin', () => {
  test("SES's source on the pipeline's own bus, account, configuration set and caller pass", () => {
    expect(originProblem(FROM_PIPELINE, TRUSTED)).toBeUndefined();
  });

  test.each([
    ['source', 'my.app', /not an SES event/],
    ['busAccount', '999988887777', /another account's event bus/],
    ['accountId', '999988887777', /another account/],
    ['configurationSet', 'marketing', /another configuration set/],
    ['callerIdentity', 'someone-else', /another caller/],
  ])('another %s is refused', (field, value, reason) => {
    expect(originProblem({ ...FROM_PIPELINE, [field]: value }, TRUSTED)).toMatch(reason);
  });

  test('a missing field is refused, not taken as a match', () => {
    const { callerIdentity, ...rest } = FROM_PIPELINE;
    void callerIdentity;
    expect(originProblem(rest, TRUSTED)).toMatch(/another caller/);
  });
});

describe('claim references', () => {
  test('a record id goes out as a tag value and comes back the same', () => {
    const id = idempotencyRecordId('email-pipeline', 'order-42');
    const ref = claimRef('email-pipeline', id);
    expect(ref).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(claimRecordId('email-pipeline', ref)).toBe(id);
  });

  test.each([
    ['empty', ''],
    ['with a space', 'has space'],
    ['with a slash', 'a/b'],
    ['over 256 characters', 'x'.repeat(300)],
    ['base64 with padding', 'AB=='],
  ])('a malformed reference (%s) names no record', (_, ref) => {
    expect(claimRecordId('email-pipeline', ref)).toBeUndefined();
  });
});

describe('binding', () => {
  const event = (attemptId: string | undefined, sesMessageId = 'ses-1', key = 'order-42') => ({
    key,
    ...(attemptId === undefined ? {} : { attemptId }),
    event: { type: 'Send', at: '2026-12-01T10:00:00.000Z', sesMessageId },
  });
  const claim: ClaimEvidence = { ledgerKey: 'order-42', attempts: new Set(['a1', 'a2']) };

  test('an event of a recorded attempt of its own key is bound', () => {
    expect(bindingProblem(event('a2'), claim)).toBeUndefined();
  });

  test('an event without an attempt id is not bound', () => {
    expect(bindingProblem(event(undefined), claim)).toMatch(/no dedupe-attempt tag/);
  });

  test('an event naming no claim is not bound', () => {
    expect(bindingProblem(event('a1'), undefined)).toMatch(/no claim/);
  });

  test("a real event copied under another key is not bound (the claim is the other key's)", () => {
    expect(bindingProblem(event('a1', 'ses-1', 'order-43'), claim)).toMatch(/another key/);
  });

  test('an attempt id the claim never recorded is not bound', () => {
    expect(bindingProblem(event('guessed'), claim)).toMatch(/never sent with/);
  });

  test("once SES answered, only that attempt's message id is bound", () => {
    const answered = { ...claim, completed: { attemptId: 'a1', sesMessageId: 'ses-1' } };
    expect(bindingProblem(event('a1', 'ses-1'), answered)).toBeUndefined();
    expect(bindingProblem(event('a1', 'ses-forged'), answered)).toMatch(/this attempt is SES message ses-1/);
  });

  test("before SES's answer is stored, the attempt's recorded Send fixes its message id", () => {
    expect(bindingProblem(event('a2', 'ses-2'), claim, 'ses-2')).toBeUndefined();
    expect(bindingProblem(event('a2', 'ses-forged'), claim, 'ses-2')).toMatch(/this attempt is SES message ses-2/);
  });

  test("SES's answer for another attempt does not fix this one's message id", () => {
    const answered = { ...claim, completed: { attemptId: 'a2', sesMessageId: 'ses-2' } };
    expect(bindingProblem(event('a1', 'ses-1'), answered)).toBeUndefined();
  });
});

describe('claim evidence from a stored record', () => {
  test('reads the attempts (a string set), the ledger key and the stored answer', () => {
    const evidence = claimEvidence({
      id: 'p#h',
      sendAttempts: new Set(['a1']),
      ledgerKey: 'order-42',
      data: { sesMessageId: 'ses-1', sentAt: 'x', attemptId: 'a1' },
    });
    expect(evidence).toEqual({
      ledgerKey: 'order-42',
      attempts: new Set(['a1']),
      completed: { attemptId: 'a1', sesMessageId: 'ses-1' },
    });
  });

  test('a record from before attempts were recorded binds nothing', () => {
    expect(claimEvidence({ id: 'p#h', status: 'COMPLETED' })?.attempts.size).toBe(0);
  });
});

test("a team's key names its team, and its own key when that fits a tag (as the send's tags carry them)", () => {
  expect(keyTeam('billing', 'billing#order-42')).toEqual({ team: 'billing', teamKey: 'order-42' });
  expect(keyTeam('billing', 'billing#order 42')).toEqual({ team: 'billing' });
  expect(keyTeam('billing', `billing#${'x'.repeat(257)}`)).toEqual({ team: 'billing' });
  expect(keyTeam(undefined, 'order-42')).toBeUndefined();
});
