import { printable } from '../../../lib/cli/printable';
import type { DecisionEvent } from './pipeline';

const LABEL: Record<DecisionEvent['decision'], string> = {
  sent: 'SENT',
  duplicate: 'DUPLICATE SUPPRESSED',
  retry: 'RETRY',
  'dead-lettered': 'DEAD-LETTERED',
  scheduled: 'SCHEDULED',
  cancelled: 'CANCELLED SUPPRESSED',
};

/**
 * One readable line for one decision of the local pipeline. What came with the message (key, reason)
 * is printable (lib/cli/printable.ts), as in every output of the operator CLI.
 */
export function formatDecision(event: DecisionEvent, now: Date = new Date()): string {
  const time = now.toISOString().slice(11, 19);
  const parts = [time, event.consumer.padEnd(6), LABEL[event.decision].padEnd(20)];
  if (event.dedupeKey) parts.push(`key=${printable(event.dedupeKey)}`);
  if (event.to?.length) parts.push(`to=${printable(event.to.join(','))}`);
  if (event.decision === 'sent' && event.sesMessageId) parts.push(`ses=${printable(event.sesMessageId)}`);
  if (event.failOpen) parts.push('(fail-open: sent without the idempotency check)');
  if (event.decision === 'retry') {
    parts.push(`${event.errorClass ?? ''}/${event.errorCode ?? ''} in ${String(event.retryInSeconds ?? '?')}s`);
  }
  if (event.decision === 'scheduled') {
    parts.push(
      `sendAt=${printable(String(event.sendAt ?? ''))} next look in ${String(event.nextLookInSeconds ?? '?')}s`,
    );
  }
  if (event.decision === 'dead-lettered') parts.push(printable(`${event.errorCode ?? ''}: ${event.reason ?? ''}`));
  if (event.receiveCount !== undefined && event.receiveCount > 1) parts.push(`(receive ${event.receiveCount})`);
  return parts.join('  ');
}
