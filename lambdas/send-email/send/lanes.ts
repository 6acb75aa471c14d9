/**
 * The lanes (normal, high) and the queues as the send function sees them: an invocation serves the
 * queue its records come from (one event source mapping per queue), so that its sends take that
 * queue's lane's slots and its retries go back to that queue. Each queue is fed by its own topics
 * only (the high-priority queue by the high-priority topics, which only their granted publishers
 * may publish to; a team's queue by the team's topic): a message is queued once, in the lane its
 * publisher's permission chose, and a team's burst waits in the team's own queue.
 */
import type { Lane } from '../../kernel/names';
import { lastPart, teamOfQueue, type TeamRoutes } from '../../kernel/teams';
import { teamLane, type LaneId } from './lane-rates';

/** The lane of records from `eventSourceArn`: high when it is the high-priority queue. */
export function laneOfSource(eventSourceArn: string | undefined, highPriorityQueueUrl: string | undefined): Lane {
  if (eventSourceArn === undefined || highPriorityQueueUrl === undefined) return 'normal';
  return lastPart(eventSourceArn) === lastPart(highPriorityQueueUrl) ? 'high' : 'normal';
}

/** Where an invocation's records come from: their lane, and the queue their retries go back to. */
export interface RecordSource {
  /**
   * `high`, `normal` (the work queue) or `team:<name>` (a team's queue): one flow each, and the lane
   * of the shared rate lease its sends pace on.
   */
  readonly id: LaneId;
  readonly lane: Lane;
  readonly queueUrl: string;
}

/**
 * The source of records from `eventSourceArn`: the high-priority queue, a team's queue, or else the
 * work queue (`sourceQueueUrl`), whose lane is normal.
 */
export function sourceOf(
  eventSourceArn: string | undefined,
  settings: {
    readonly sourceQueueUrl: string;
    readonly highPriorityQueueUrl?: string;
    readonly teams?: TeamRoutes;
  },
): RecordSource {
  if (laneOfSource(eventSourceArn, settings.highPriorityQueueUrl) === 'high' && settings.highPriorityQueueUrl) {
    return { id: 'high', lane: 'high', queueUrl: settings.highPriorityQueueUrl };
  }
  const team = teamOfQueue(settings.teams, eventSourceArn);
  const queueUrl = team === undefined ? undefined : settings.teams?.[team]?.queueUrl;
  if (team !== undefined && queueUrl !== undefined) return { id: teamLane(team), lane: 'normal', queueUrl };
  return { id: 'normal', lane: 'normal', queueUrl: settings.sourceQueueUrl };
}
