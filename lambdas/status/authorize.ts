/**
 * Who may cancel through the status function's URL. IAM lets anyone with `lambda:InvokeFunctionUrl`
 * call the URL with any method, so a principal allowed to read statuses could also cancel; the
 * function therefore checks the caller AWS authenticated (the function URL's `userArn`) against the
 * cancel principals the construct lists: IAM role ARNs (matched by account and role name, as an
 * assumed-role session names them: `arn:aws:sts::<account>:assumed-role/<name>/<session>`) and IAM
 * user ARNs (matched whole).
 */

/** The account and role name of an IAM role ARN (any path), or undefined when it is not one. */
function roleOf(arn: string): { partition: string; account: string; name: string } | undefined {
  const match = /^arn:([a-z-]+):iam::(\d{12}):role\/(?:[^/]+\/)*([^/]+)$/.exec(arn);
  return match ? { partition: match[1]!, account: match[2]!, name: match[3]! } : undefined;
}

/** Whether `callerArn` (as the function URL authenticated it) is one of `allowed`. */
export function mayCancel(callerArn: string | undefined, allowed: readonly string[]): boolean {
  if (callerArn === undefined || callerArn === '') return false;
  const session = /^arn:([a-z-]+):sts::(\d{12}):assumed-role\/([^/]+)\/[^/]+$/.exec(callerArn);
  return allowed.some((arn) => {
    if (arn === callerArn && !arn.includes(':assumed-role/')) return true;
    const role = roleOf(arn);
    return (
      role !== undefined &&
      session !== null &&
      role.partition === session[1] &&
      role.account === session[2] &&
      role.name === session[3]
    );
  });
}

/** Thrown by a cancel its caller may not make: the URL answers 403. */
export class CancelNotAllowedError extends Error {
  constructor(readonly caller: string) {
    super(
      `${caller} may not cancel: reading statuses does not allow it. ` +
        'Ask for the cancel grant (EmailPipeline grantCancel, or the cancelPrincipals setting).',
    );
    this.name = 'CancelNotAllowedError';
  }
}
