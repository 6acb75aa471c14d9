/**
 * The lanes (normal, high) as the send function sees them: an invocation serves the lane of the
 * queue its records come from (one event source mapping per queue), so that its sends take that
 * lane's slots and its retries go back to that queue. Each queue is fed by one topic only (the
 * high-priority queue by the high-priority topic, which only its granted publishers may publish
 * to): a message is queued once, in the lane its publisher's permission chose.
 */
import type { Lane } from '../../kernel/names';

/** The name of an SQS queue, from its URL or its ARN. */
export function queueName(urlOrArn: string): string {
  const tail = urlOrArn.split(/[/:]/).filter((part) => part !== '');
  return tail[tail.length - 1] ?? '';
}

/** The lane of records from `eventSourceArn`: high when it is the high-priority queue. */
export function laneOfSource(eventSourceArn: string | undefined, highPriorityQueueUrl: string | undefined): Lane {
  if (eventSourceArn === undefined || highPriorityQueueUrl === undefined) return 'normal';
  return queueName(eventSourceArn) === queueName(highPriorityQueueUrl) ? 'high' : 'normal';
}
