/**
 * The lanes of the rate: `high` (the high-priority reserve), `normal` (the work queue's) and, with
 * teams, `team:<name>` (each team's queue); each is one item of the shared rate lease, and
 * {@link laneRates} gives each its rate from maxSendRate, the high lane's share and the teams'.
 * Pure: the pacer's policy (pacing-policy.ts) and the send function read them.
 */
import type { Lane } from '../../kernel/names';

/**
 * Each container paces a little under the rate: requests that leave evenly spaced can still arrive
 * bunched (network, scheduling), and SES counts their arrival. The shared lease uses 95 % of
 * maxSendRate, the static share 95 % of maxSendRate / maxConcurrency.
 */
export const PACING_HEADROOM = 0.95;
/**
 * A lane of the rate, and an item of the shared lease: `high`, `normal` (the work queue's), or
 * `team:<name>` (a team's queue's; see {@link teamLane}).
 */
export type LaneId = Lane | `team:${string}`;

/** The lane of a team's queue. */
export function teamLane(team: string): LaneId {
  return `team:${team}`;
}

/** The kind of a lane (the RecipientsPaced metric's dimension): high, or normal for every other lane. */
export function kindOf(lane: LaneId): Lane {
  return lane === 'high' ? 'high' : 'normal';
}

/**
 * The lanes' rates (recipients per second): 95 % of maxSendRate, `highShare` percent of it for the
 * high lane. What high leaves is split among the teams by `teamShares` (percent, by team name: each
 * team's effective share) and the work queue's `normal` lane, which keeps what the shares leave
 * (none when they sum to 100: its sends then borrow idle slots only).
 */
export function laneRates(
  maxSendRate: number,
  highShare: number,
  teamShares: Readonly<Record<string, number>> = {},
): Record<LaneId, number> {
  const rate = maxSendRate * PACING_HEADROOM;
  const high = (rate * highShare) / 100;
  const rates: Record<LaneId, number> = { high, normal: rate - high };
  let shared = 0;
  for (const [team, share] of Object.entries(teamShares)) {
    rates[teamLane(team)] = ((rate - high) * share) / 100;
    shared += share;
  }
  rates.normal = ((rate - high) * Math.max(0, 100 - shared)) / 100;
  return rates;
}
