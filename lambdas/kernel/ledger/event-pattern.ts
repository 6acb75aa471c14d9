/**
 * The EventBridge rule that feeds the ledger: SES's own events (`source` aws.ses, a source no
 * PutEvents caller may use) on this account's default bus, of the types the ledger records, sent
 * through the pipeline's configuration set. One declaration for the construct's rule and the local
 * event bus (tools/dev/local/event-bus.ts), so the two cannot match different events.
 */
import { SES_EVENT_SOURCE } from './binding';
import { SES_DETAIL_TYPES } from './events';

/** The SES event types the ledger records (the detail's `eventType`): all but opens, clicks and subscriptions. */
export const LEDGER_SES_EVENT_TYPES = [
  'Send',
  'Delivery',
  'Bounce',
  'Complaint',
  'Reject',
  'DeliveryDelay',
  'Rendering Failure',
] as const;

/** The rule's event pattern (EventBridge's JSON pattern language: each leaf lists the values that match). */
export function ledgerEventPattern(accountId: string, configurationSetName: string) {
  return {
    source: [SES_EVENT_SOURCE],
    account: [accountId],
    'detail-type': LEDGER_SES_EVENT_TYPES.map((type) => SES_DETAIL_TYPES[type] as string),
    detail: { mail: { tags: { 'ses:configuration-set': [configurationSetName] } } },
  };
}
