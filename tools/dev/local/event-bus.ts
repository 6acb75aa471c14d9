/**
 * The local stand-in for EventBridge's default bus, as far as the send ledger meets it: SES puts
 * its events there (a configuration set's EventBridge destination), and rules with an SQS target
 * deliver the matching ones to a queue, the event itself as the message body.
 *
 * The envelope is EventBridge's (EventBridge events reference, "Event structure"): `version` "0",
 * a fresh `id`, `detail-type` (SES's name for the event type, events.ts SES_DETAIL_TYPES),
 * `source` "aws.ses", `account` (the local account), `time` (second precision, as EventBridge
 * writes it), `region`, `resources` (empty in SES's samples), and `detail`: SES's event exactly as
 * it publishes it to any destination (`eventType`, `mail` with its tags, the event's own object).
 *
 * Patterns are matched as EventBridge matches them, for the subset rules here use: every field of
 * the pattern must be in the event; a leaf is a list of allowed values, and an event value that is
 * a list matches when any of its elements is allowed.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { SES_EVENT_SOURCE } from '../../../lambdas/kernel/ledger/binding';
import { SES_DETAIL_TYPES } from '../../../lambdas/kernel/ledger/events';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../../../lib/cli/target';
import { emulatorConfig } from './emulator-config';

/** The ARN of the local default bus: the only bus SES's EventBridge destination accepts. */
export const LOCAL_DEFAULT_BUS_ARN = `arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:event-bus/default`;

type Pattern = { readonly [field: string]: readonly unknown[] | Pattern };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `event` matches `pattern` (lists of allowed values at the leaves, nested objects between). */
export function matchesPattern(pattern: Pattern, event: unknown): boolean {
  if (!isObject(event)) return false;
  return Object.entries(pattern).every(([field, rule]) => {
    if (!Object.hasOwn(event, field)) return false;
    const value = event[field];
    if (Array.isArray(rule)) {
      const values = Array.isArray(value) ? value : [value];
      return values.some((v) => rule.includes(v));
    }
    return matchesPattern(rule as Pattern, value);
  });
}

/** SES's event as EventBridge delivers it from this account's default bus. */
export function eventBridgeEnvelope(
  detail: Readonly<Record<string, unknown>>,
  options: { readonly account?: string; readonly region?: string; readonly at?: Date } = {},
): Record<string, unknown> {
  const type = typeof detail.eventType === 'string' ? detail.eventType : '';
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': Object.hasOwn(SES_DETAIL_TYPES, type) ? SES_DETAIL_TYPES[type] : `Email ${type}`,
    source: SES_EVENT_SOURCE,
    account: options.account ?? LOCAL_ACCOUNT_ID,
    time: (options.at ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: options.region ?? LOCAL_REGION,
    resources: [],
    detail,
  };
}

export interface LocalRule {
  readonly name: string;
  readonly pattern: Pattern;
  /** The SQS target: the queue the matching events are sent to. */
  readonly queueUrl: string;
}

export class LocalEventBus {
  readonly #rules = new Map<string, LocalRule>();
  readonly #sqs: SQSClient;

  constructor(sqsEndpoint: string) {
    this.#sqs = new SQSClient({ ...emulatorConfig(sqsEndpoint), useQueueUrlAsEndpoint: false, maxAttempts: 5 });
  }

  /** Adds (or replaces) a rule and its queue target. */
  putRule(rule: LocalRule): void {
    this.#rules.set(rule.name, rule);
  }

  /** Delivers `event` to the queue of every rule it matches; resolves to how many it reached. */
  async put(event: Readonly<Record<string, unknown>>): Promise<number> {
    const targets = [...this.#rules.values()].filter((rule) => matchesPattern(rule.pattern, event));
    for (const rule of targets) {
      await this.#sqs.send(new SendMessageCommand({ QueueUrl: rule.queueUrl, MessageBody: JSON.stringify(event) }));
    }
    return targets.length;
  }

  destroy(): void {
    this.#sqs.destroy();
  }
}
