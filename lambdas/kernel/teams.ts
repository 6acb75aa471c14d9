/**
 * The teams as the functions know them: each team's topics and senders, written by the construct
 * and the local pipeline into one environment variable ({@link TEAMS_ENV}, JSON) and read back here. A
 * message's team is the topic its envelope names ({@link teamOfTopic}): the topic policies decide
 * who may publish there, so nothing a publisher writes can choose a team. No imports: the
 * construct, the CLI and the local tools read it without any function's dependencies.
 */

/**
 * The send function's variable holding the teams (JSON of {@link TeamRoutes}); written only when
 * the pipeline has teams. Apart from ENV: it is the one variable a pipeline without teams lacks.
 */
export const TEAMS_ENV = 'TEAMS';

/**
 * A team's name: a short lowercase identifier. It becomes part of construct ids, output names,
 * the `<team>#<key>` namespace of keys and the `<team>/` prefix of attachments, so it holds no
 * `#`, `/` or upper case.
 */
export const TEAM_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** One team's topics, queue and From addresses. */
export interface TeamRoute {
  /** The team's topic, feeding the team's queue. */
  readonly topicArn: string;
  /**
   * The team's own queue, which its topic feeds (its retries and due scheduled copies go back
   * there): a burst of one team waits in its own queue, never in front of another team's mail.
   * @default none: the team's topic feeds the work queue
   */
  readonly queueUrl?: string;
  /** The team's high-priority topic, feeding the high-priority queue; none when the team has no high priority. */
  readonly highPriorityTopicArn?: string;
  /** The addresses the team may send from; the first is its default. */
  readonly senders: readonly string[];
  /** The team's SES tenant: its sends name it (SendEmail's TenantName). @default none: no tenant */
  readonly tenantName?: string;
  /**
   * The team's part (percent) of the rate: its lanes of the shared rate lease (its high-priority
   * mail's part of it, with a high-priority topic), which it borrows beyond while other lanes are idle.
   * @default none: the team's sends pace on the work queue's lane
   */
  readonly rateSharePercent?: number;
}

/** Every team by name. */
export type TeamRoutes = Readonly<Record<string, TeamRoute>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * The teams of `raw` (the variable `variable` holds), checked; undefined when absent or empty.
 * Throws naming the variable and the team at fault: a function must not start half-configured.
 */
export function parseTeamRoutes(raw: string | undefined, variable: string): TeamRoutes | undefined {
  if (raw === undefined || raw === '') return undefined;
  const bad = (what: string): never => {
    throw new Error(`Environment variable ${variable} ${what}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return bad('must be JSON');
  }
  if (!isRecord(parsed)) {
    return bad(
      'must be a JSON object: team name -> { topicArn, queueUrl?, highPriorityTopicArn?, senders, tenantName?, rateSharePercent? }',
    );
  }
  const out: Record<string, TeamRoute> = {};
  for (const [name, team] of Object.entries(parsed)) {
    if (!isRecord(team) || !nonEmptyString(team.topicArn)) bad(`: team ${name} needs a topicArn`);
    const route = team as Record<string, unknown>;
    const high = route.highPriorityTopicArn;
    if (high !== undefined && !nonEmptyString(high)) bad(`: team ${name} has an empty highPriorityTopicArn`);
    const senders = route.senders;
    if (!Array.isArray(senders) || senders.length === 0 || !senders.every(nonEmptyString)) {
      bad(`: team ${name} needs a non-empty list of senders`);
    }
    const tenant = route.tenantName;
    if (tenant !== undefined && !nonEmptyString(tenant)) bad(`: team ${name} has an empty tenantName`);
    const queueUrl = route.queueUrl;
    if (queueUrl !== undefined && !nonEmptyString(queueUrl)) bad(`: team ${name} has an empty queueUrl`);
    const share = route.rateSharePercent;
    if (share !== undefined && !(typeof share === 'number' && share >= 0 && share <= 100)) {
      bad(`: team ${name} has a rateSharePercent that is not a number from 0 to 100`);
    }
    out[name] = {
      topicArn: route.topicArn as string,
      ...(queueUrl !== undefined ? { queueUrl: queueUrl as string } : {}),
      ...(high !== undefined ? { highPriorityTopicArn: high as string } : {}),
      senders: senders as string[],
      ...(tenant !== undefined ? { tenantName: tenant as string } : {}),
      ...(share !== undefined ? { rateSharePercent: share as number } : {}),
    };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The team whose topic (either of them) is `topicArn`, or undefined when no team's is. */
export function teamOfTopic(teams: TeamRoutes | undefined, topicArn: unknown): string | undefined {
  if (teams === undefined || typeof topicArn !== 'string') return undefined;
  for (const [name, route] of Object.entries(teams)) {
    if (route.topicArn === topicArn || route.highPriorityTopicArn === topicArn) return name;
  }
  return undefined;
}

/**
 * The dedupe key of a team's message: `<team>#<key>`, so the same idempotency key from two teams
 * is two emails (two claims, two ledger items, two statuses). The implicit team (the pipeline's
 * own topics) keeps its keys bare, as before teams. A team name holds no `#`, so the team is the
 * part before the first one.
 */
export function teamKey(team: string, key: string): string {
  return `${team}#${key}`;
}

/** The SES tenant whose name a send of `key` carries: its team's, when the team has one. */
export function tenantOfKey(teams: TeamRoutes | undefined, key: string): string | undefined {
  const team = teamOfKey(teams === undefined ? undefined : Object.keys(teams), key);
  return team === undefined ? undefined : teams?.[team]?.tenantName;
}

/**
 * The team whose own queue is `queueUrlOrArn` (compared by queue name, the last part of a URL or
 * an ARN), or undefined when it is no team's.
 */
export function teamOfQueue(teams: TeamRoutes | undefined, queueUrlOrArn: string | undefined): string | undefined {
  if (teams === undefined || queueUrlOrArn === undefined) return undefined;
  const name = lastPart(queueUrlOrArn);
  for (const [team, route] of Object.entries(teams)) {
    if (route.queueUrl !== undefined && lastPart(route.queueUrl) === name) return team;
  }
  return undefined;
}

/** A queue's name, from its URL or its ARN. */
export function lastPart(urlOrArn: string): string {
  const parts = urlOrArn.split(/[/:]/).filter((part) => part !== '');
  return parts[parts.length - 1] ?? '';
}

/** The team whose namespace `key` is in (`<team>#...` for one of `teamNames`), or undefined. */
export function teamOfKey(teamNames: readonly string[] | undefined, key: string): string | undefined {
  const at = key.indexOf('#');
  if (teamNames === undefined || at < 0) return undefined;
  const team = key.slice(0, at);
  return teamNames.includes(team) ? team : undefined;
}

/**
 * The team whose key namespace a bare key from the pipeline's own topics would enter (it starts
 * with `<team>#` for a configured team), or undefined. Such a key is refused: it would claim, or
 * read the status of, that team's mail.
 */
export function namespaceTaken(teams: TeamRoutes | undefined, key: string): string | undefined {
  const at = key.indexOf('#');
  if (teams === undefined || at < 0) return undefined;
  const team = key.slice(0, at);
  return Object.hasOwn(teams, team) ? team : undefined;
}

/**
 * The alias of the status and cancel functions that serves one team (`team-<name>`): its function
 * URL is granted to the team's status readers or cancellers only, and answers for that team's keys.
 */
export const TEAM_ALIAS_PREFIX = 'team-';

/** The team a function was invoked as: its ARN's qualifier when that is a team alias, else undefined. */
export function teamOfInvocation(invokedFunctionArn: string | undefined): string | undefined {
  // arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>]
  const qualifier = invokedFunctionArn?.split(':')[7];
  if (qualifier === undefined || !qualifier.startsWith(TEAM_ALIAS_PREFIX)) return undefined;
  const team = qualifier.slice(TEAM_ALIAS_PREFIX.length);
  return TEAM_NAME.test(team) ? team : undefined;
}
