/**
 * The teams' topics on the emulator, as lib/construct/pipeline/team-topics.ts makes them in a
 * stack: a topic per team subscribed to the work queue and, for a team with `highPriority`, a
 * high-priority topic subscribed to the high-priority queue (SNS envelope, raw delivery off, no
 * filter). What comes back is what the send consumers are told (TEAMS) and outputs.json's `Teams`.
 * The emulator enforces no topic policy: locally anyone may publish to any team's topic.
 */
import { CreateTopicCommand, SubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import type { ResolvedTeam } from '../../../lib/settings';

/** outputs.json's `Teams`: each team's topic and, with high priority, its high-priority topic. */
export type LocalTeamOutputs = Record<string, { readonly TopicArn: string; readonly HighPriorityTopicArn?: string }>;

/** Creates (or finds) each team's topics and subscribes them to the lanes' queues (by ARN). Safe to call twice. */
export async function createTeamTopics(
  sns: SNSClient,
  teams: Readonly<Record<string, ResolvedTeam>>,
  name: string,
  queues: { readonly queueArn: string; readonly highPriorityQueueArn: string },
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
    const topicArn = await topic(`${name}-team-${team}`, queues.queueArn);
    const highPriorityTopicArn = settings.highPriority
      ? await topic(`${name}-team-${team}-high`, queues.highPriorityQueueArn)
      : undefined;
    routes[team] = { topicArn, ...(highPriorityTopicArn ? { highPriorityTopicArn } : {}), senders: settings.senders };
  }
  return routes;
}

/** outputs.json's `Teams` from the routes: the topics only (publishers name topics, not senders). */
export function teamOutputs(routes: TeamRoutes): LocalTeamOutputs {
  return Object.fromEntries(
    Object.entries(routes).map(([team, route]) => [
      team,
      {
        TopicArn: route.topicArn,
        ...(route.highPriorityTopicArn ? { HighPriorityTopicArn: route.highPriorityTopicArn } : {}),
      },
    ]),
  );
}
