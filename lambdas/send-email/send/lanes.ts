/**
 * The lanes (normal, high) as the send function sees them: an invocation serves the lane of the
 * queue its records come from (one event source mapping per queue), so that its sends take that
 * lane's slots and its retries go back to that queue. The work queue's subscription has no filter
 * (SNS matches no filter against a message without message attributes, and such a message must not
 * be lost), so it also gets a copy of each high-priority message; the dedupe key makes that copy a
 * duplicate of the one the high lane sends, and it is sent from the work queue only if the high lane
 * never did (its copy dead-lettered, say).
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
