/**
 * The construct's rule for callback URLs, checked at synth: on AWS a callback is POSTed from the
 * pipeline's account to the publisher's server, so its URL must be `https://` and must not name
 * this side's own network (localhost, or an IP literal in a private, loopback, link-local, CGNAT,
 * unspecified or other non-public range, IPv4 or IPv6), where a request could reach the
 * account's own services (the instance metadata endpoint, a VPC's hosts). The settings accept
 * `http://` too, for the local pipeline. The ranges are the callback function's own
 * (lambdas/kernel/callbacks/address.ts), which checks the addresses a host resolves to again at
 * send time (a name can resolve to a private address).
 */
import { isIP } from 'node:net';
import { blockedAddress } from '../../../lambdas/kernel/callbacks/address';
import { SettingsError } from '../../settings';
import { callbackUrlField, configuredCallbacks } from '../../settings/callbacks';
import type { ResolvedSettings } from '../../settings';

/** Whether `host` is an IP literal outside the public address space (the ranges the callback function refuses too). */
export function isNonPublicAddress(host: string): boolean {
  return isIP(host) !== 0 && blockedAddress(host) !== undefined;
}

/** Why `url` cannot be a callback URL on AWS, or undefined when it can. */
export function awsCallbackUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL (https://host/path)';
  }
  if (parsed.protocol !== 'https:') return 'must be an https:// URL on AWS (http:// is for the local pipeline only)';
  // URL keeps an IPv6 host in brackets; a trailing dot names the same host.
  const host = parsed.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not name localhost';
  if (isNonPublicAddress(host)) {
    return 'must not name a private, loopback, link-local, CGNAT or unspecified address';
  }
  return undefined;
}

/** Throws a SettingsError naming the field (`callbackUrl`, `teams.<name>.callbackUrl`) of the first URL refused on AWS. */
export function checkAwsCallbackUrls(
  settings: Pick<ResolvedSettings, 'callbackUrl' | 'callbackStatuses' | 'teams'>,
): void {
  for (const [target, callback] of Object.entries(configuredCallbacks(settings))) {
    const problem = awsCallbackUrlProblem(callback.url);
    if (problem !== undefined) throw new SettingsError(callbackUrlField(target), callback.url, problem);
  }
}
