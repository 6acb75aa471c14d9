/**
 * `npm run status` (status-command.ts) without the process around it: where a
 * lookup reads (the local pipeline's outputs.json or a stack's outputs) and how a
 * report reads to a person.
 */
import { RESEND_EVENT_TYPE, type DeliveryReport } from '../../lambdas/kernel/ledger/schema';
import type { LookupTarget } from '../../lambdas/status/lookup';
import { printable } from './printable';

/** The outputs a lookup needs (same keys in a stack's outputs and in the local outputs.json). */
export const STATUS_OUTPUTS = ['LedgerTableName', 'TableName', 'IdempotencyKeyPrefix'] as const;

/**
 * The tables and key prefix named by a set of outputs. Throws naming every
 * missing output and where it was looked for (`source`).
 */
export function lookupTargetFromOutputs(
  outputs: Readonly<Record<string, string | undefined>>,
  source: string,
): LookupTarget {
  const missing = STATUS_OUTPUTS.filter((name) => !outputs[name]);
  if (missing.length > 0) {
    throw new Error(
      `${source} has no ${missing.join(', ')} output${missing.length > 1 ? 's' : ''}: it predates the send ledger: deploy it again with this version (the local pipeline: start it again)`,
    );
  }
  return {
    ledgerTableName: outputs.LedgerTableName as string,
    idempotencyTableName: outputs.TableName as string,
    keyPrefix: outputs.IdempotencyKeyPrefix as string,
  };
}

const EXPLANATIONS: Readonly<Record<DeliveryReport['status'], string>> = {
  unknown: 'nothing is recorded for this key: never published, not claimed yet, or past the dedupe window',
  'in-progress': 'a send is claimed and not finished (or its outcome is being confirmed)',
  'dead-lettered': 'the message went to the DLQ without an email (email-pipeline dlq list --key shows why)',
  sent: 'SES accepted the email; no delivery event yet',
  delayed: 'SES is still trying to deliver',
  delivered: 'the recipient mail server accepted the email',
  bounced: 'the email bounced',
  complained: 'the recipient marked the email as spam',
  rejected: 'SES did not send the email (rejected or rendering failure)',
  scheduled: 'waiting in the queue for its sendAt; not sent yet',
  cancelled: 'cancelled before it was sent: it never will be',
};

/**
 * A report as lines for a person: status, SES MessageId, then the timeline oldest first. Every value
 * from the tables (the key, SES's ids, event types and details, which SES events carry) is
 * {@link printable}: it cannot break a line or reach the terminal raw.
 */
export function formatReport(report: DeliveryReport): string {
  const released = report.status === 'unknown' && report.events.at(-1)?.type === RESEND_EVENT_TYPE;
  const explanation = released
    ? 'released for a resend: it is sent when the message comes again (redriven or published again)'
    : EXPLANATIONS[report.status];
  const lines = [`${printable(report.key)}: ${report.status} (${explanation})`];
  if (report.sesMessageId !== undefined) lines.push(`  SES message  ${printable(report.sesMessageId)}`);
  if (report.updatedAt !== undefined) lines.push(`  updated      ${printable(report.updatedAt)}`);
  if (report.events.length > 0) {
    lines.push('  events');
    const types = report.events.map((e) => printable(e.type));
    const width = Math.max(...types.map((type) => type.length));
    report.events.forEach((event, i) => {
      const detail = event.detail !== undefined ? `  ${printable(event.detail)}` : '';
      lines.push(`    ${printable(event.at)}  ${(types[i] ?? '').padEnd(width)}${detail}`.trimEnd());
    });
  }
  return lines.join('\n');
}
