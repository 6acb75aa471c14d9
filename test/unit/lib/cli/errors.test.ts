import { awsFailure, closest, OperationError, suggestion } from '../../../../lib/cli/errors';

test('a typo of one letter, a swap of neighbours or a prefix finds the known word', () => {
  expect(closest('--maxx', ['--max', '--json', '--stack'])).toBe('--max');
  expect(closest('dql', ['dlq', 'publish'])).toBe('dlq');
  expect(closest('lis', ['list', 'redrive', 'purge'])).toBe('list');
  expect(closest('redirve', ['list', 'redrive', 'purge'])).toBe('redrive');
});

test('nothing is suggested for a word unlike any known one', () => {
  expect(closest('deploy', ['dlq', 'publish', 'status'])).toBeUndefined();
  expect(suggestion('deploy', ['dlq', 'publish'])).toBe('');
  expect(suggestion('dlg', ['dlq', 'publish'])).toBe(' (did you mean dlq?)');
});

describe('awsFailure: what AWS said, and what to do next', () => {
  const sdkError = (name: string, message: string, code?: string) =>
    Object.assign(new Error(message), { name }, code ? { code } : {});

  test('no credentials: how to provide them', () => {
    const error = awsFailure(
      'Could not read stack X',
      sdkError('CredentialsProviderError', 'Could not load credentials from any providers'),
    );
    expect(error).toBeInstanceOf(OperationError);
    expect(error.message).toBe(
      'Could not read stack X: CredentialsProviderError: Could not load credentials from any providers. ' +
        'No AWS credentials were found: set AWS_PROFILE (after aws sso login, for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.',
    );
  });

  test('a missing permission, an unknown stack, an expired token and no network each get their advice', () => {
    expect(
      awsFailure('x', sdkError('AccessDeniedException', 'not authorized to perform sqs:PurgeQueue')).message,
    ).toContain('What an operator needs on AWS');
    expect(awsFailure('x', sdkError('ValidationError', 'Stack with id X does not exist')).message).toContain(
      'Check the stack name (--stack) and the region',
    );
    expect(
      awsFailure('x', sdkError('ExpiredTokenException', 'The security token included in the request is expired'))
        .message,
    ).toContain('have expired');
    expect(
      awsFailure('x', sdkError('Error', 'getaddrinfo ENOTFOUND sqs.eu-west-1.amazonaws.com', 'ENOTFOUND')).message,
    ).toContain('AWS could not be reached');
  });

  test('a role the profile may not assume: the redrive role and the props that list who may', () => {
    const denied = sdkError(
      'AccessDenied',
      'User: arn:aws:iam::123456789012:user/ada is not authorized to perform: sts:AssumeRole on resource: ' +
        'arn:aws:iam::123456789012:role/MailStack-MailRedriveRole-EXAMPLE',
    );
    const message = awsFailure('Could not redrive the DLQ of stack MailStack', denied).message;
    expect(message).toContain('sts:AssumeRole on resource');
    expect(message).toContain('redrivePrincipals');
    expect(message).toContain('redriveRoleAssumedBy');
    expect(message).toContain('emailPipeline:redrivePrincipals');
    expect(message).not.toContain('What an operator needs on AWS');
    // Another action denied keeps the general advice.
    expect(
      awsFailure('x', sdkError('AccessDenied', 'not authorized to perform: sqs:SendMessage')).message,
    ).not.toContain('redrivePrincipals');
  });

  test('against the local emulators, no AWS advice; an OperationError passes through as it is', () => {
    expect(
      awsFailure('Could not list the DLQ', sdkError('Error', 'connect ECONNREFUSED', 'ECONNREFUSED'), false).message,
    ).toBe('Could not list the DLQ: Error: connect ECONNREFUSED');
    const own = new OperationError('No AWS region is configured');
    expect(awsFailure('x', own)).toBe(own);
  });
});
