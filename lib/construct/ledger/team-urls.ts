/**
 * Status and cancel per team, decided by IAM. For a team with `statusReaders` or `cancelers`, an
 * alias `team-<name>` of the status function with a function URL of its own (AWS_IAM), granted to
 * the team's readers and cancellers only; for a team with `cancelers`, the same of the cancel
 * function, granted to its cancellers only. A function invoked as a team's alias answers for that
 * team's keys and refuses any other team's (lambdas/status/http.ts), so a team's principals reach
 * their own mail only, while the pipeline's own URLs stay with the principals granted them
 * (grantStatusRead, grantCancel, cancelPrincipals: the platform's operators).
 */
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { TEAM_ALIAS_PREFIX } from '../../../lambdas/kernel/teams';
import { teamOwnUrls, type ResolvedTeam } from '../../settings';
import { principalsFromStrings } from '../pipeline/principals';

/** One team's own URLs (each only when the team lists principals for it). */
export interface TeamUrls {
  /** `GET <url>deliveries/{key}`: the team's keys; its readers and cancellers may invoke it. */
  readonly statusUrl?: lambda.FunctionUrl;
  /** `DELETE <url>deliveries/{key}`: the team's keys; its cancellers only may invoke it. */
  readonly cancelUrl?: lambda.FunctionUrl;
}

function teamUrl(fn: lambda.Function, team: string, grantees: readonly iam.IPrincipal[]): lambda.FunctionUrl {
  const alias = fn.addAlias(`${TEAM_ALIAS_PREFIX}${team}`);
  const url = alias.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
  for (const grantee of grantees) url.grantInvokeUrl(grantee);
  return url;
}

/** Each team's own status and cancel URLs, by team (teams listing nobody get none). */
export function buildTeamUrls(props: {
  readonly teams: Readonly<Record<string, ResolvedTeam>>;
  readonly statusFunction: lambda.Function;
  readonly cancelFunction: lambda.Function;
}): Record<string, TeamUrls> {
  const out: Record<string, TeamUrls> = {};
  for (const [name, team] of Object.entries(props.teams)) {
    const own = teamOwnUrls(team);
    if (!own.status) continue;
    const readers = principalsFromStrings(team.statusReaders);
    const cancelers = principalsFromStrings(team.cancelers);
    out[name] = {
      statusUrl: teamUrl(props.statusFunction, name, [...readers, ...cancelers]),
      ...(own.cancel ? { cancelUrl: teamUrl(props.cancelFunction, name, cancelers) } : {}),
    };
  }
  return out;
}
