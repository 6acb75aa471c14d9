/**
 * Who may cancel through the status URL (lambdas/status/authorize.ts): the caller AWS
 * authenticated, against the cancel principals' ARNs; a role's sessions match by account and
 * name (whatever the role's path), a user by its whole ARN, nothing else.
 */
import { mayCancel } from '../../lambdas/status/authorize';
import { handleStatusRequest } from '../../lambdas/status/http';
import { CancelNotAllowedError } from '../../lambdas/status/authorize';

const ROLE = 'arn:aws:iam::123456789012:role/team/ops';
const USER = 'arn:aws:iam::123456789012:user/alice';

test("a session of a listed role may cancel, whatever the session's name and the role's path", () => {
  expect(mayCancel('arn:aws:sts::123456789012:assumed-role/ops/ada', [ROLE])).toBe(true);
  expect(mayCancel('arn:aws:sts::123456789012:assumed-role/ops/i-0abc', [USER, ROLE])).toBe(true);
});

test('a listed user may cancel, by its whole ARN', () => {
  expect(mayCancel(USER, [ROLE, USER])).toBe(true);
  expect(mayCancel('arn:aws:iam::123456789012:user/alice2', [USER])).toBe(false);
});

test('nobody else: another role, the same name in another account or partition, a user named like the role', () => {
  expect(mayCancel('arn:aws:sts::123456789012:assumed-role/reader/ada', [ROLE])).toBe(false);
  expect(mayCancel('arn:aws:sts::210987654321:assumed-role/ops/ada', [ROLE])).toBe(false);
  expect(mayCancel('arn:aws-cn:sts::123456789012:assumed-role/ops/ada', [ROLE])).toBe(false);
  expect(mayCancel('arn:aws:iam::123456789012:user/ops', [ROLE])).toBe(false);
  expect(mayCancel('arn:aws:iam::123456789012:root', [ROLE, USER])).toBe(false);
  expect(mayCancel('arn:aws:sts::123456789012:assumed-role/ops/ada/extra', [ROLE])).toBe(false);
});

test('no caller, or no cancel principals: no cancel', () => {
  expect(mayCancel(undefined, [ROLE])).toBe(false);
  expect(mayCancel('', [ROLE])).toBe(false);
  expect(mayCancel('arn:aws:sts::123456789012:assumed-role/ops/ada', [])).toBe(false);
  // A session ARN listed as if it were a principal names no one: sessions change.
  expect(
    mayCancel('arn:aws:sts::123456789012:assumed-role/ops/ada', ['arn:aws:sts::123456789012:assumed-role/ops/ada']),
  ).toBe(false);
});

test('a cancel refused as not allowed answers 403 with the reason', async () => {
  const response = await handleStatusRequest(
    'DELETE',
    '/deliveries/order-1',
    () => Promise.reject(new Error('not read')),
    () => undefined,
    () => Promise.reject(new CancelNotAllowedError('arn:aws:sts::123456789012:assumed-role/reader/bob')),
  );
  expect(response.statusCode).toBe(403);
  expect(JSON.parse(response.body).message).toMatch(/reader\/bob may not cancel/);
});
