/**
 * The rules settings share with the rest of the construct: the error every rule throws, the
 * addresses a setting may hold, and the log retentions CloudWatch Logs accepts.
 */
import { parseAddress } from '../../lambdas/kernel/contract/address';

/**
 * Retention values CloudWatch Logs accepts, in days (aws-cdk-lib's `logs.RetentionDays` without
 * INFINITE; a unit test keeps the two equal). Here, not in the construct, so that the local
 * pipeline refuses what the synth refuses.
 */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/** A setting that breaks a rule. The message names the setting, its value and the rule. */
export class SettingsError extends Error {
  constructor(
    readonly setting: string,
    readonly value: unknown,
    readonly rule: string,
  ) {
    super(`Invalid setting ${setting}=${JSON.stringify(value)}: ${rule}`);
    this.name = 'SettingsError';
  }
}

/** The part after the @, lower-cased. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Why `value` cannot be a configured address (sender, email identity, alarm
 * recipient), or undefined: the message contract's rules, and a bare address
 * as written (no display name, punycode domain, no IAM wildcards).
 */
export function configuredAddressProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be an email address such as noreply@example.com';
  const parsed = parseAddress(value);
  if (!parsed.ok) {
    // "must be an email address like name@example.com" says it all; "has an invalid domain" needs the lead-in.
    return parsed.reason.startsWith('must be an email address')
      ? parsed.reason
      : `must be an email address such as noreply@example.com: it ${parsed.reason}`;
  }
  if (parsed.value.displayName !== undefined || /[<>]/.test(value)) {
    return 'must be a bare address without a display name (set senderName for the From name)';
  }
  if (parsed.value.address !== value) {
    return `must be written as SES takes it: ${parsed.value.address} (domain in punycode, no spaces)`;
  }
  if (/[*?]/.test(value)) return 'must not contain * or ?, which IAM conditions read as wildcards';
  return undefined;
}
