/**
 * The teams' topics on the emulator, as lib/construct/pipeline/team-topics.ts makes them in a
 * stack: a topic per team subscribed to the team's own queue and, for a team with `highPriority`, a
 * high-priority topic subscribed to the high-priority queue (SNS envelope, raw delivery off, no
 * filter). What comes back is what the send consumers are told (TEAMS) and outputs.json's `Teams`.
 * The emulator enforces no topic policy: locally anyone may publish to any team's topic. For a
 * team with `sesTenant`, an SES tenant on the local SES layer (ses-tenants.ts) with the pipeline's
 * configuration set associated, as lib/construct/pipeline/team-tenants.ts makes one in a stack.
 */
import { CreateTopicCommand, SubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import { CreateTenantCommand, CreateTenantResourceAssociationCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import { LOCAL_ACCOUNT_ID } from '../../../lib/cli/target';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import { effectiveSharePercent, type ResolvedTeam } from '../../../lib/settings';

/**
 * outputs.json's `Teams`: each team's topic and, with high priority, its high-priority topic; for a
 * team with URLs of its own, its status and cancel URLs (each ending in `deliveries/`, as on AWS).
 */
export type LocalTeamOutputs = Record<
  string,
  {
    readonly TopicArn: string;
    readonly HighPriorityTopicArn?: string;
    readonly StatusUrl?: string;
    readonly CancelUrl?: string;
    readonly CallbackSigningSecret?: string;
    readonly TenantName?: string;
  }
>;

/**
 * Creates (or finds) each team's queue (by `teamQueue`, named `<name>-t-<team>`) and topics, and
 * subscribes the topic to the team's queue and the high-priority topic to the high-priority queue
 * (by ARN). Safe to call twice.
 */
export async function createTeamTopics(
  sns: SNSClient,
  teams: Readonly<Record<string, ResolvedTeam>>,
  name: string,
  queues: {
    readonly teamQueue: (queueName: string) => Promise<{ readonly url: string; readonly arn: string }>;
    readonly highPriorityQueueArn: string;
  },
): Promise<TeamRoutes> {
  const topic = async (topicName: string, queueArn: string): Promise<string> => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: topicName }));
    if (!TopicArn) throw new Error(`the emulator did not return the ARN of topic ${topicName}`);
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: queueArn,
        Attributes: { RawMessageDelivery: 'false' },
      }),
    );
    return TopicArn;
  };
  const routes: Record<string, TeamRoutes[string]> = {};
  for (const [team, settings] of Object.entries(teams)) {
    const queue = await queues.teamQueue(`${name}-t-${team}`);
    const topicArn = await topic(`${name}-team-${team}`, queue.arn);
    const highPriorityTopicArn = settings.highPriority
      ? await topic(`${name}-team-${team}-high`, queues.highPriorityQueueArn)
      : undefined;
    routes[team] = {
      topicArn,
      queueUrl: queue.url,
      ...(highPriorityTopicArn ? { highPriorityTopicArn } : {}),
      senders: settings.senders,
      rateSharePercent: effectiveSharePercent(teams, team),
    };
  }
  return routes;
}

/**
 * Creates the SES tenant of each team with `sesTenant`, `<name>-<team>`, with the configuration
 * set associated, and returns the routes with each such team's `tenantName`. Safe to call twice.
 */
export async function createTeamTenants(
  ses: SESv2Client,
  teams: Readonly<Record<string, ResolvedTeam>>,
  routes: TeamRoutes,
  name: string,
  configurationSetName: string,
): Promise<TeamRoutes> {
  const region = await ses.config.region();
  const out: Record<string, TeamRoutes[string]> = { ...routes };
  for (const [team, settings] of Object.entries(teams)) {
    const route = routes[team];
    if (!settings.sesTenant || route === undefined) continue;
    const tenantName = `${name}-${team}`;
    const existing = (error: unknown) => {
      if ((error as Error | undefined)?.name !== 'AlreadyExistsException') throw error;
    };
    await ses.send(new CreateTenantCommand({ TenantName: tenantName })).catch(existing);
    await ses.send(
      new CreateTenantResourceAssociationCommand({
        TenantName: tenantName,
        ResourceArn: `arn:aws:ses:${region}:${LOCAL_ACCOUNT_ID}:configuration-set/${configurationSetName}`,
      }),
    );
    out[team] = { ...route, tenantName };
  }
  return out;
}

/**
 * outputs.json's `Teams` from the routes: the topics (publishers name topics, not senders), for a
 * team with an SES tenant its name (what `email-pipeline verify` asks GetTenant about), and for a
 * team with URLs of its own on the local status server (`urls`, by team: their bases), those URLs
 * (what `email-pipeline cancel --team` calls).
 */
export function teamOutputs(
  routes: TeamRoutes,
  urls: Readonly<Record<string, { readonly statusUrl: string; readonly cancelUrl?: string }>> = {},
): LocalTeamOutputs {
  return Object.fromEntries(
    Object.entries(routes).map(([team, route]) => [
      team,
      {
        TopicArn: route.topicArn,
        ...(route.highPriorityTopicArn ? { HighPriorityTopicArn: route.highPriorityTopicArn } : {}),
        ...(urls[team] ? { StatusUrl: `${urls[team].statusUrl}/deliveries/` } : {}),
        ...(urls[team]?.cancelUrl ? { CancelUrl: `${urls[team].cancelUrl}/deliveries/` } : {}),
        ...(route.tenantName ? { TenantName: route.tenantName } : {}),
      },
    ]),
  );
}
