/**
 * The lanes of the rate: `high` (the high-priority reserve) and `normal` (the work queue's) and, with
 * teams, `team:<name>` (each team's queue) and `high:<name>` (the high-priority reserve of a team that
 * may send high-priority mail); each is one item of the shared rate lease, and {@link laneRates} gives
 * each its rate from maxSendRate, the high-priority share and the teams' shares. Pure: the pacer's
 * policy (pacing-policy.ts) and the send function read them.
 */
import type { Lane } from '../../kernel/names';

/**
 * Each container paces a little under the rate: requests that leave evenly spaced can still arrive
 * bunched (network, scheduling), and SES counts their arrival. The shared lease uses 95 % of
 * maxSendRate, the static share 95 % of maxSendRate / maxConcurrency.
 */
export const PACING_HEADROOM = 0.95;
/**
 * A lane of the rate, and an item of the shared lease: `high`, `normal` (the work queue's),
 * `team:<name>` (a team's queue's; see {@link teamLane}) or `high:<name>` (a team's high-priority
 * mail's; see {@link teamHighLane}).
 */
export type LaneId = Lane | `team:${string}` | `high:${string}`;

/** The lane of a team's queue. */
export function teamLane(team: string): LaneId {
  return `team:${team}`;
}

/** The lane of a team's high-priority mail (its part of the high-priority reserve). */
export function teamHighLane(team: string): LaneId {
  return `high:${team}`;
}

/** The kind of a lane (the RecipientsPaced metric's dimension): high for the high-priority lanes, else normal. */
export function kindOf(lane: LaneId): Lane {
  return lane === 'high' || lane.startsWith('high:') ? 'high' : 'normal';
}

/**
 * The other lane of the same owner: a team's high-priority lane and its queue's lane, or the
 * pipeline's own `high` and `normal`. A lane borrows its sibling's idle slots first, and holds them
 * against other lanes while it does: a team's idle reserve is the team's own.
 */
export function siblingOf(lane: LaneId): LaneId {
  if (lane === 'high') return 'normal';
  if (lane === 'normal') return 'high';
  return lane.startsWith('high:') ? teamLane(lane.slice('high:'.length)) : teamHighLane(lane.slice('team:'.length));
}

/**
 * The lanes' rates (recipients per second), of 95 % of maxSendRate. Each team with a share
 * (`teamShares`, percent, by team name: each team's effective share) gets that share of the whole
 * rate; for a team in `highTeams` (may send high-priority mail), `highShare` percent of its share is
 * its high-priority lane, the rest its queue's lane. What the teams' shares leave is the pipeline's
 * own: `highShare` percent of it the `high` lane, the rest the work queue's `normal` lane (none when
 * the shares sum to 100: those sends then borrow idle slots only). Without teams, `high` and `normal`
 * split the whole rate.
 */
export function laneRates(
  maxSendRate: number,
  highShare: number,
  teamShares: Readonly<Record<string, number>> = {},
  highTeams: readonly string[] = [],
): Record<LaneId, number> {
  const rate = maxSendRate * PACING_HEADROOM;
  const split = (part: number) => ({ high: (part * highShare) / 100, rest: part - (part * highShare) / 100 });
  const rates: Record<LaneId, number> = { high: 0, normal: 0 };
  let shared = 0;
  for (const [team, share] of Object.entries(teamShares)) {
    const part = (rate * share) / 100;
    shared += share;
    if (!highTeams.includes(team)) {
      rates[teamLane(team)] = part;
      continue;
    }
    rates[teamHighLane(team)] = split(part).high;
    rates[teamLane(team)] = split(part).rest;
  }
  const own = split((rate * Math.max(0, 100 - shared)) / 100);
  rates.high = own.high;
  rates.normal = own.rest;
  return rates;
}
