/**
 * The lanes (normal, high) as the send function sees them: which lane an invocation serves (the
 * queue its records come from), and whether a record on the normal queue is the copy of a
 * high-priority message. The normal queue's subscription has no filter: SNS cannot match a message
 * without message attributes against any filter (`exists: false` needs at least one attribute), and
 * such a message must not be lost. So the normal queue gets every message, the high queue (filter
 * `priority = high`) its own copy of the high ones, and the normal lane leaves those to the high
 * lane, matching them exactly as SNS's filter does.
 */
import { PRIORITY_ATTRIBUTE, type Lane } from '../../kernel/names';

/** The value of the `priority` attribute that chooses the high lane. */
export const HIGH_PRIORITY = 'high';

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

/**
 * Whether an SNS envelope (a record's body) carries `priority = high` as the high queue's
 * subscription filter reads it: a String attribute equal to `high`, or a String.Array holding it.
 */
export function isHighPriorityEnvelope(body: string): boolean {
  // Most bodies never name the attribute: no parse for them.
  if (!body.includes(`"${PRIORITY_ATTRIBUTE}"`)) return false;
  try {
    const envelope = JSON.parse(body) as { MessageAttributes?: Record<string, { Type?: string; Value?: string }> };
    const attribute = envelope.MessageAttributes?.[PRIORITY_ATTRIBUTE];
    if (attribute?.Type === 'String') return attribute.Value === HIGH_PRIORITY;
    if (attribute?.Type === 'String.Array') {
      const values: unknown = JSON.parse(attribute.Value ?? '[]');
      return Array.isArray(values) && values.includes(HIGH_PRIORITY);
    }
    return false;
  } catch {
    return false;
  }
}
