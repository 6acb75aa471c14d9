/**
 * The `teams` setting's rules: a team's name, its senders, publishers and the other principal
 * lists, its rate share. Each error names the field at fault (`teams.billing.senders[1]`). With
 * no teams nothing is resolved: the pipeline stays one implicit team. Plain TypeScript with no
 * aws-cdk-lib import: the local pipeline resolves teams here too.
 */
import { closest } from 'fastest-levenshtein';
import { TEAM_NAME } from '../../lambdas/kernel/teams';
import { PUBLISHER_PRINCIPAL, ROLE_OR_USER_ARN } from './context';
import { resolveCallbackStatuses, resolveCallbackUrl } from './callbacks';
import { configuredAddressProblem, domainOf, SettingsError } from './rules';
import type { ResolvedTeam, TeamSettings } from './types';

export { TEAM_NAME };

/** The most teams one pipeline takes: each is one or two topics, and an entry in the queues' policies. */
export const MAX_TEAMS = 50;

const TEAM_FIELDS: readonly (keyof TeamSettings)[] = [
  'senders',
  'publishers',
  'highPriority',
  'rateSharePercent',
  'sesTenant',
  'statusReaders',
  'cancelers',
  'callbackUrl',
  'callbackStatuses',
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list of strings, each checked by `problem`; absent gives []. */
function stringList(
  field: string,
  value: unknown,
  problem: (item: string) => string | undefined,
  required: boolean,
): string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || (required && value.length === 0)) {
    throw new SettingsError(field, value, required ? 'must be a non-empty list' : 'must be a list');
  }
  value.forEach((item: unknown, i) => {
    const reason = typeof item === 'string' ? problem(item) : 'must be a string';
    if (reason !== undefined) throw new SettingsError(`${field}[${i}]`, item, reason);
  });
  if (new Set(value).size !== value.length) throw new SettingsError(field, value, 'must not list an entry twice');
  return value as string[];
}

function sender(identity: string): (address: string) => string | undefined {
  return (address) => {
    const problem = configuredAddressProblem(address);
    if (problem !== undefined) return problem;
    const belongs = identity.includes('@')
      ? identity.toLowerCase() === address.toLowerCase()
      : domainOf(address) === identity.toLowerCase();
    return belongs ? undefined : `must belong to the SES identity ${identity}`;
  };
}

const publisher = (value: string): string | undefined =>
  PUBLISHER_PRINCIPAL.test(value)
    ? undefined
    : 'must be a 12-digit account id or an IAM ARN (arn:aws:iam::123456789012:role/name, :user/name or :root)';

const roleOrUser = (value: string): string | undefined =>
  ROLE_OR_USER_ARN.test(value)
    ? undefined
    : 'must be an IAM role or user ARN (arn:aws:iam::123456789012:role/name or :user/name)';

function resolveTeam(name: string, input: unknown, sesIdentity: string): ResolvedTeam {
  const at = `teams.${name}`;
  if (!isRecord(input)) throw new SettingsError(at, input, 'must be an object with at least `senders`');
  for (const field of Object.keys(input)) {
    if ((TEAM_FIELDS as readonly string[]).includes(field)) continue;
    const near = closest(field, [...TEAM_FIELDS]);
    throw new SettingsError(`${at}.${field}`, input[field], `is not a team field; did you mean ${near}?`);
  }
  const flag = (field: 'highPriority' | 'sesTenant'): boolean => {
    const value = input[field] ?? false;
    if (typeof value !== 'boolean') throw new SettingsError(`${at}.${field}`, value, 'must be true or false');
    return value;
  };
  const share = input.rateSharePercent;
  if (share !== undefined && (!Number.isInteger(share) || (share as number) < 1 || (share as number) > 100)) {
    throw new SettingsError(`${at}.rateSharePercent`, share, 'must be a whole number from 1 to 100 (percent)');
  }
  const callbackUrl = resolveCallbackUrl(`${at}.callbackUrl`, input.callbackUrl);
  const callbackStatuses = resolveCallbackStatuses(
    `${at}.callbackStatuses`,
    input.callbackStatuses,
    callbackUrl,
    `${at}.callbackUrl`,
  );
  return {
    senders: stringList(`${at}.senders`, input.senders, sender(sesIdentity), true),
    publishers: stringList(`${at}.publishers`, input.publishers, publisher, false),
    highPriority: flag('highPriority'),
    ...(share !== undefined ? { rateSharePercent: share as number } : {}),
    sesTenant: flag('sesTenant'),
    statusReaders: stringList(`${at}.statusReaders`, input.statusReaders, roleOrUser, false),
    cancelers: stringList(`${at}.cancelers`, input.cancelers, roleOrUser, false),
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
    ...(callbackStatuses !== undefined ? { callbackStatuses } : {}),
  };
}

/**
 * The teams with their defaults, checked; undefined when none are configured (`undefined`, or
 * an empty object: one implicit team, as before teams existed). `sesIdentity` is the resolved one:
 * every sender must belong to it, as `senderAddress` must.
 */
export function resolveTeams(input: unknown, sesIdentity: string): Readonly<Record<string, ResolvedTeam>> | undefined {
  if (input === undefined) return undefined;
  if (!isRecord(input)) throw new SettingsError('teams', input, 'must be an object: team name -> team');
  const names = Object.keys(input);
  if (names.length === 0) return undefined;
  if (names.length > MAX_TEAMS) throw new SettingsError('teams', names, `must name at most ${MAX_TEAMS} teams`);
  const out: Record<string, ResolvedTeam> = {};
  for (const name of names) {
    if (!TEAM_NAME.test(name)) {
      throw new SettingsError(
        `teams.${name}`,
        name,
        'the team name must be 1 to 32 lowercase letters, digits or "-", starting with a letter',
      );
    }
    out[name] = resolveTeam(name, input[name], sesIdentity);
  }
  const total = Object.values(out).reduce((sum, team) => sum + (team.rateSharePercent ?? 0), 0);
  if (total > 100) {
    const shares = Object.fromEntries(Object.entries(out).map(([name, team]) => [name, team.rateSharePercent]));
    throw new SettingsError(
      'teams.*.rateSharePercent',
      shares,
      `must sum to at most 100 over all teams (they sum to ${total})`,
    );
  }
  return out;
}

/**
 * The part (percent) of the send capacity a team's queue is given: its `rateSharePercent`, or, for a
 * team without one, an equal part of what the shares leave (0 when they leave nothing).
 */
export function effectiveSharePercent(teams: Readonly<Record<string, ResolvedTeam>>, name: string): number {
  const own = teams[name]?.rateSharePercent;
  if (own !== undefined) return own;
  const shared = Object.values(teams).filter((team) => team.rateSharePercent === undefined).length;
  const left = 100 - Object.values(teams).reduce((sum, team) => sum + (team.rateSharePercent ?? 0), 0);
  return shared === 0 ? 0 : left / shared;
}

/**
 * How many invocations a team's queue may run at once (its event source mapping's maximum
 * concurrency): its share ({@link effectiveSharePercent}) of `maxConcurrency`, at least `least`
 * (Lambda's least for a mapping is 2). The share of the rate itself is kept by the team's own lane of
 * the shared rate lease (send/pacing-policy.ts `laneRates`), whatever the number of invocations;
 * this bounds how many of them wait for slots at once (waiting is billed Lambda time).
 */
export function teamConcurrency(
  teams: Readonly<Record<string, ResolvedTeam>>,
  name: string,
  maxConcurrency: number,
  least = 2,
): number {
  return Math.max(least, Math.round((maxConcurrency * effectiveSharePercent(teams, name)) / 100));
}

/**
 * Which URLs of its own a team has: a status URL when it lists any status reader or canceller, a
 * cancel URL when it lists any canceller. The stack's aliases (lib/construct/ledger/team-urls.ts)
 * and the local status server (tools/dev/local/status-endpoint.ts) follow this one rule.
 */
export function teamOwnUrls(team: Pick<ResolvedTeam, 'statusReaders' | 'cancelers'>): {
  readonly status: boolean;
  readonly cancel: boolean;
} {
  return {
    status: team.statusReaders.length + team.cancelers.length > 0,
    cancel: team.cancelers.length > 0,
  };
}
