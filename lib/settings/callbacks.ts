/**
 * The callback settings' rules (`callbackUrl`, `callbackStatuses`, and a team's own): a URL the
 * callback function may POST to, and statuses the ledger reports. Each error names the field at
 * fault. Whether a URL must be `https://` is the construct's rule (AWS); the local pipeline also
 * takes `http://` (its receivers are on 127.0.0.1). Plain TypeScript, no aws-cdk-lib import.
 */
import { PIPELINE_TARGET } from '../../lambdas/kernel/callbacks/names';
import { EVENT_STATUS } from '../../lambdas/kernel/ledger/events';
import { SettingsError } from './rules';
import type { ResolvedSettings } from './types';

/**
 * The statuses a callback is told of: those SES's events set, which the ledger publishes, and
 * `dead-lettered`, which the send function tells itself. (`scheduled` and `cancelled` are written
 * to the ledger by the send and cancel functions, without a change on the status topic.)
 */
export const CALLBACK_STATUSES: readonly string[] = [...new Set(Object.values(EVENT_STATUS)), 'dead-lettered'];

/** Why `url` cannot be a callback URL, or undefined when it can (http or https; checked again at synth). */
export function callbackUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL (https://host/path)';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an https:// URL';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'must not carry a user or password (requests are signed; put no secret in the URL)';
  }
  if (parsed.hash !== '') return 'must not have a #fragment';
  return undefined;
}

/** The URL, checked, or undefined when absent. */
export function resolveCallbackUrl(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new SettingsError(field, value, 'must be a URL (a string)');
  const problem = callbackUrlProblem(value);
  if (problem !== undefined) throw new SettingsError(field, value, problem);
  return value;
}

/** The statuses, checked, or undefined when absent (every change). Needs a URL beside it. */
export function resolveCallbackStatuses(
  field: string,
  value: unknown,
  url: string | undefined,
  urlField: string,
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (url === undefined) throw new SettingsError(field, value, `has no callback to apply to: set ${urlField} too`);
  if (!Array.isArray(value) || value.length === 0) throw new SettingsError(field, value, 'must be a non-empty list');
  value.forEach((status: unknown, i) => {
    if (typeof status !== 'string' || !CALLBACK_STATUSES.includes(status)) {
      throw new SettingsError(`${field}[${i}]`, status, `must be one of ${CALLBACK_STATUSES.join(', ')}`);
    }
  });
  if (new Set(value).size !== value.length) throw new SettingsError(field, value, 'must not list a status twice');
  return value as string[];
}

/** One configured callback: where it POSTs and which statuses it is told of (every change when absent). */
export interface ConfiguredCallback {
  readonly url: string;
  readonly statuses?: readonly string[];
}

/**
 * The callbacks the settings ask for, by target: the pipeline's (`*`, {@link PIPELINE_TARGET}) and
 * each team's with a URL. Empty: no callback, nothing of the callbacks is made (construct or local).
 */
export function configuredCallbacks(
  settings: Pick<ResolvedSettings, 'callbackUrl' | 'callbackStatuses' | 'teams'>,
): Record<string, ConfiguredCallback> {
  const out: Record<string, ConfiguredCallback> = {};
  const add = (target: string, url: string | undefined, statuses: readonly string[] | undefined) => {
    if (url !== undefined) out[target] = { url, ...(statuses ? { statuses } : {}) };
  };
  add(PIPELINE_TARGET, settings.callbackUrl, settings.callbackStatuses);
  for (const [team, resolved] of Object.entries(settings.teams ?? {})) {
    add(team, resolved.callbackUrl, resolved.callbackStatuses);
  }
  return out;
}

/** The field a target's callback URL is set by: `callbackUrl`, or `teams.<name>.callbackUrl`. */
export function callbackUrlField(target: string): string {
  return target === PIPELINE_TARGET ? 'callbackUrl' : `teams.${target}.callbackUrl`;
}
