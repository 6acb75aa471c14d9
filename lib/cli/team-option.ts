/**
 * `--team NAME`, as every command that takes it reads it: a team's keys are its own, `<team>#<key>`
 * (teamKey in lambdas/kernel/teams.ts), so a command given --team acts on the key a team published
 * without the operator typing the prefix. A name that cannot be a team (TEAM_NAME) is a usage error.
 */
import { TEAM_NAME, teamKey } from '../../lambdas/kernel/teams';
import { OperationError, UsageError } from './errors';

/** The option as parseCommand takes it. */
export const TEAM_OPTION = { team: { type: 'string' } } as const;

/** The team named by --team, checked; undefined without it. Throws UsageError (exit 2) when it cannot be a team. */
export function teamOption(team: string | undefined, usage: string): string | undefined {
  if (team !== undefined && !TEAM_NAME.test(team)) {
    throw new UsageError(
      `${JSON.stringify(team)} cannot be a team: a team name is 1 to 32 lowercase letters, digits or "-", starting with a letter`,
      usage,
    );
  }
  return team;
}

/** The dedupe key `key` is in `team`'s namespace (`<team>#<key>`), or `key` itself without a team. */
export function keyOfTeam(team: string | undefined, key: string): string {
  return team === undefined ? key : teamKey(team, key);
}

/** What every key of `team` starts with: `<team>#`. */
export function teamPrefix(team: string): string {
  return teamKey(team, '');
}

/** One team's topics, and its own status and cancel URLs when it has them, as a pipeline's outputs name them. */
export interface TeamTopicOutputs {
  readonly TopicArn: string;
  readonly HighPriorityTopicArn?: string;
  readonly StatusUrl?: string;
  readonly CancelUrl?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An output that is an object (`Teams`, `Callbacks`): JSON text in a stack's `Endpoints` (as
 * stack-outputs.ts keeps it) or an object in `.local/outputs.json`; undefined when absent or not one.
 */
export function objectOutput(
  outputs: Readonly<Record<string, unknown>>,
  name: string,
): Record<string, unknown> | undefined {
  let value: unknown = outputs[name];
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      value = undefined;
    }
  }
  return isRecord(value) ? value : undefined;
}

/**
 * `team`'s topics from a pipeline's outputs: `Teams`, JSON text in a stack's `Endpoints` (as
 * stack-outputs.ts keeps it) or an object in `.local/outputs.json`. Throws OperationError naming
 * the teams there are when `where` (the pipeline, as the CLI names it) has no such team.
 */
export function teamTopicsOf(
  outputs: Readonly<Record<string, unknown>>,
  team: string,
  where: string,
): TeamTopicOutputs {
  const teams = objectOutput(outputs, 'Teams');
  const own = teams?.[team];
  if (!isRecord(own) || typeof own.TopicArn !== 'string') {
    const known = teams ? Object.keys(teams) : [];
    throw new OperationError(
      `${where} has no team ${team}: ${known.length > 0 ? `its teams are ${known.join(', ')}` : 'it has no teams'}`,
    );
  }
  const text = (name: 'HighPriorityTopicArn' | 'StatusUrl' | 'CancelUrl') =>
    typeof own[name] === 'string' ? { [name]: own[name] } : {};
  return { TopicArn: own.TopicArn, ...text('HighPriorityTopicArn'), ...text('StatusUrl'), ...text('CancelUrl') };
}
