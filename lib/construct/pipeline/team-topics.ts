/**
 * The teams' topics: for each team of the `teams` setting, a topic feeding the team's own queue and,
 * for a team with `highPriority`, a high-priority topic feeding the high-priority queue; each
 * with the SNS envelope, the subscription DLQ and the topic key, as the pipeline's own topics.
 *
 * A message's team is the topic it came through (the send function maps the envelope's TopicArn
 * to its team), so who may publish to a team's topics is who may send as that team: each topic's
 * policy admits the team's `publishers` only and denies everyone else. With no teams nothing is
 * built here and the template is as it was.
 */
import { CfnOutput } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import { effectiveSharePercent, type ResolvedTeam } from '../../settings';
import { principalsFromStrings } from './principals';
import { restrictPublishers } from './resource-policies';

/** One team's topics. */
export interface TeamTopics {
  /** Feeds the team's queue. */
  readonly topic: sns.Topic;
  /** Feeds the high-priority queue; only for a team with `highPriority`. */
  readonly highPriorityTopic?: sns.Topic;
}

/** The teams' topics by team name, subscribed to the pipeline's queues, each team in a scope `Team-<name>`. */
export function buildTeamTopics(
  scope: Construct,
  props: {
    readonly teams: Readonly<Record<string, ResolvedTeam>>;
    readonly topicKey: kms.IKey;
    /** Each team's own queue (queues.ts), fed by its topic. */
    readonly teamQueues: Readonly<Record<string, sqs.IQueue>>;
    readonly highPriorityQueue: sqs.IQueue;
    readonly subscriptionDeadLetterQueue: sqs.IQueue;
  },
): Record<string, TeamTopics> {
  const out: Record<string, TeamTopics> = {};
  for (const [name, team] of Object.entries(props.teams)) {
    const teamScope = new Construct(scope, `Team-${name}`);
    // As the pipeline's own topics: envelope (raw delivery off), and what SNS cannot deliver to its DLQ.
    const subscribed = (id: string, queue: sqs.IQueue, description: string) => {
      const topic = new sns.Topic(teamScope, id, { masterKey: props.topicKey, enforceSSL: true });
      topic.addSubscription(
        new SqsSubscription(queue, { rawMessageDelivery: false, deadLetterQueue: props.subscriptionDeadLetterQueue }),
      );
      new CfnOutput(teamScope, `${id}Arn`, { value: topic.topicArn, description });
      return topic;
    };
    out[name] = {
      topic: subscribed('Topic', teamQueue(props.teamQueues, name), `Team ${name} publishes email requests here`),
      ...(team.highPriority
        ? {
            highPriorityTopic: subscribed(
              'HighPriorityTopic',
              props.highPriorityQueue,
              `Team ${name} publishes high-priority email requests here`,
            ),
          }
        : {}),
    };
  }
  return out;
}

/** `team`'s queue; a team always has one (queues.ts makes one per team of the same setting). */
export function teamQueue<Q>(queues: Readonly<Record<string, Q>>, team: string): Q {
  const queue = queues[team];
  if (queue === undefined) throw new Error(`team ${team} has no queue`);
  return queue;
}

/** Who feeds which queue of the teams' (resource-policies.ts restrictQueueSenders): each team's topic its own queue. */
export function teamQueueSenders(
  topics: Readonly<Record<string, TeamTopics>>,
  queues: Readonly<Record<string, sqs.IQueue>>,
): {
  readonly teamHighPriorityTopics: sns.ITopic[];
  readonly teamQueues: { readonly queue: sqs.IQueue; readonly topic: sns.ITopic }[];
} {
  return {
    teamHighPriorityTopics: Object.values(topics).flatMap((t) => t.highPriorityTopic ?? []),
    teamQueues: Object.entries(topics).map(([name, t]) => ({ queue: teamQueue(queues, name), topic: t.topic })),
  };
}

/**
 * Each team's topics admit the team's `publishers` only (the high-priority topic too); while a team
 * lists none, the Deny exempts only `sendRole`, which no statement lets publish: nobody publishes.
 */
export function restrictTeamPublishers(
  topics: Readonly<Record<string, TeamTopics>>,
  teams: Readonly<Record<string, ResolvedTeam>>,
  sendRole: iam.IRole,
): void {
  for (const [name, team] of Object.entries(teams)) {
    const own = topics[name];
    if (own === undefined) continue;
    const publishers = principalsFromStrings(team.publishers);
    for (const topic of [own.topic, own.highPriorityTopic]) {
      if (topic === undefined) continue;
      restrictPublishers(topic, publishers, {
        setting: `teams.${name}.publishers`,
        grantedBy: `teams.${name}.publishers`,
        required: false,
        nobody: sendRole.roleArn,
      });
    }
  }
}

/**
 * What the send function and the endpoints know of the teams: each team's topic ARNs, queue, senders
 * and share of the rate (for a team with a queue), and its SES tenant's name for a team with one
 * (`tenants`, by team: team-tenants.ts).
 */
export function teamRoutes(
  topics: Readonly<Record<string, TeamTopics>>,
  teams: Readonly<Record<string, ResolvedTeam>>,
  tenants: Readonly<Record<string, string>> = {},
  queues: Readonly<Record<string, sqs.IQueue>> = {},
): TeamRoutes {
  return Object.fromEntries(
    Object.entries(topics).map(([name, own]) => {
      const tenantName = tenants[name];
      return [
        name,
        {
          topicArn: own.topic.topicArn,
          ...(queues[name] ? { queueUrl: queues[name].queueUrl } : {}),
          ...(own.highPriorityTopic ? { highPriorityTopicArn: own.highPriorityTopic.topicArn } : {}),
          senders: teams[name]?.senders ?? [],
          ...(tenantName !== undefined ? { tenantName } : {}),
          ...(queues[name] ? { rateSharePercent: effectiveSharePercent(teams, name) } : {}),
        },
      ];
    }),
  );
}
