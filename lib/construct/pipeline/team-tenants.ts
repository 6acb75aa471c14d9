/**
 * The teams' SES tenants. For each team with `sesTenant`, an `AWS::SES::Tenant` (CDK has only the
 * L1) with SES's standard reputation policy, under which a tenant whose bounces or complaints pass
 * the policy's thresholds is paused by SES, not the whole account; and the SES resources its
 * sends use associated with it: the identity, the pipeline's configuration set, and the templates
 * `sesTemplateNames` names. SendEmail names the team's tenant (TenantName) and succeeds only when
 * its identity, configuration set and template are associated with that tenant, so a team with a
 * tenant that sends stored templates needs them listed in `sesTemplateNames`.
 *
 * A tenant's name is unique in the account and region (the stack's path, then the team), so two
 * pipelines never share one. With no team asking, nothing is built and the template is as it was.
 */
import { ArnFormat, Names, Stack } from 'aws-cdk-lib';
import * as ses from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import type { ResolvedTeam } from '../../settings';

/** SES's managed reputation policy every team tenant gets: `standard` (`strict` pauses earlier, `none` never). */
export const TENANT_REPUTATION_POLICY = 'standard';

/** SES's longest tenant name. */
const MAX_TENANT_NAME = 64;

/**
 * The SES tenant name of `team` in the pipeline `scope`: the pipeline's unique name (stack and
 * path, letters and digits, with a hash) then `-<team>`, 64 characters at most.
 */
export function tenantNameOf(scope: Construct, team: string): string {
  const prefix = Names.uniqueResourceName(scope, { maxLength: MAX_TENANT_NAME - team.length - 1, separator: '-' });
  return `${prefix}-${team}`;
}

/** The teams that asked for a tenant, with their tenant names. */
export function tenantNames(
  scope: Construct,
  teams: Readonly<Record<string, ResolvedTeam>>,
): Readonly<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(teams)
      .filter(([, team]) => team.sesTenant)
      .map(([name]) => [name, tenantNameOf(scope, name)]),
  );
}

/** One `AWS::SES::Tenant` per team with `sesTenant`, each in the team's scope `Team-<name>`, by team name. */
export function buildTeamTenants(
  scope: Construct,
  props: {
    readonly teams: Readonly<Record<string, ResolvedTeam>>;
    /** The SES identity the senders belong to (the `sesIdentity` setting). */
    readonly sesIdentity: string;
    readonly configurationSetName: string;
    /** Stored templates the teams send (`sesTemplateNames`). @default none */
    readonly templateNames?: readonly string[];
  },
): Record<string, ses.CfnTenant> {
  const stack = Stack.of(scope);
  const sesArn = (resource: string, name: string) =>
    stack.formatArn({ service: 'ses', resource, resourceName: name, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  const associated = [
    sesArn('identity', props.sesIdentity),
    sesArn('configuration-set', props.configurationSetName),
    ...(props.templateNames ?? []).map((name) => sesArn('template', name)),
  ];
  const out: Record<string, ses.CfnTenant> = {};
  for (const [team, name] of Object.entries(tenantNames(scope, props.teams))) {
    const teamScope = scope.node.tryFindChild(`Team-${team}`) as Construct | undefined;
    out[team] = new ses.CfnTenant(teamScope ?? scope, teamScope ? 'SesTenant' : `SesTenant-${team}`, {
      tenantName: name,
      resourceAssociations: associated.map((resourceArn) => ({ resourceArn })),
      reputationEntity: {
        policy: {
          reputationEntityPolicy: `arn:${stack.partition}:ses:${stack.region}:aws:reputation-policy/${TENANT_REPUTATION_POLICY}`,
        },
      },
    });
  }
  return out;
}
