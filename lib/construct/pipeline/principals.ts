/**
 * Principals as the pipeline's settings name them: parsed from strings (CDK
 * context), and the ARN a principal is known by in `aws:PrincipalArn`, which
 * the queue policies' exemptions name.
 */
import { Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ROLE_OR_USER_ARN, SettingsError } from '../../settings';

/**
 * Principals from strings (settings given in CDK context): a 12-digit account
 * id becomes an {@link iam.AccountPrincipal}, an ARN an {@link iam.ArnPrincipal}.
 */
export function principalsFromStrings(values: readonly string[]): iam.IPrincipal[] {
  return values.map((value) =>
    /^\d{12}$/.test(value) ? new iam.AccountPrincipal(value) : new iam.ArnPrincipal(value),
  );
}

/**
 * The ARN a principal is known by in `aws:PrincipalArn`: a role's (which its sessions carry too) or
 * a user's. Accounts are refused: their ARN names only the root user, and an exemption names principals.
 */
export function principalArn(principal: iam.IPrincipal, setting: string): string {
  const refuse = (value: unknown): never => {
    throw new SettingsError(setting, value, 'each must be a role or a user, by ARN (an IRole or an ArnPrincipal)');
  };
  if (principal instanceof iam.AccountPrincipal) return refuse(principal.toString());
  if (isRole(principal)) return principal.roleArn;
  if (principal instanceof iam.ArnPrincipal) {
    const arn = principal.arn;
    // A token (a role of another stack) is the app's to get right; a literal must be a role or user ARN.
    if (!Token.isUnresolved(arn) && !ROLE_OR_USER_ARN.test(arn)) return refuse(arn);
    return arn;
  }
  return refuse(principal.toString());
}

/** Whether a principal is a role (an {@link iam.IRole}, which has a role ARN and a role name). */
export function isRole(p: iam.IPrincipal): p is iam.IRole {
  return (
    typeof (p as Partial<iam.IRole>).roleArn === 'string' && typeof (p as Partial<iam.IRole>).roleName === 'string'
  );
}
