import { LEDGER_ENV } from '../lambdas/ledger/schema';
import { ENV } from '../lambdas/send-email/settings';
import type { ResolvedSettings } from './config';

/** The service name in logs and the `service` metric dimension. */
export const SERVICE_NAME = 'email-pipeline';

/**
 * The idempotency table as Powertools' DynamoDB persistence layer expects it by
 * default: partition key `id`, record expiry in `expiration` (the TTL attribute).
 */
export const IDEMPOTENCY_TABLE = { partitionKey: 'id', ttlAttribute: 'expiration' } as const;

/** Names of the resources the handler talks to (CDK tokens in a stack, real values locally). */
export interface HandlerResourceRefs {
  /** The pipeline's topic: the handler sends only envelopes from it. */
  readonly topicArn: string;
  readonly tableName: string;
  readonly sourceQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** The send ledger's table (LEDGER_TABLE_NAME). @default none: no ledger lookups */
  readonly ledgerTableName?: string;
}

/**
 * The handler's environment, built from the resolved settings. The CDK
 * construct and the local pipeline both call this, so a setting cannot reach
 * one and miss the other.
 */
export function handlerEnvironment(settings: ResolvedSettings, refs: HandlerResourceRefs): Record<string, string> {
  return {
    [ENV.senderAddress]: settings.senderAddress,
    ...(settings.senderName ? { [ENV.senderName]: settings.senderName } : {}),
    [ENV.topicArn]: refs.topicArn,
    ...(settings.configurationSetName ? { [ENV.configurationSetName]: settings.configurationSetName } : {}),
    [ENV.tableName]: refs.tableName,
    [ENV.keyPrefix]: settings.idempotencyKeyPrefix,
    [ENV.dedupeWindowSeconds]: String(settings.dedupeWindowSeconds),
    [ENV.sourceQueueUrl]: refs.sourceQueueUrl,
    [ENV.deadLetterQueueUrl]: refs.deadLetterQueueUrl,
    [ENV.maxReceiveCount]: String(settings.maxReceiveCount),
    [ENV.failOpen]: String(settings.failOpen),
    ...(refs.ledgerTableName !== undefined ? { [LEDGER_ENV.tableName]: refs.ledgerTableName } : {}),
    [LEDGER_ENV.sendConfirmationGraceSeconds]: String(settings.sendConfirmationGraceSeconds),
    [ENV.retryBudgetSeconds]: String(settings.retryBudgetSeconds),
    [ENV.maxSendRate]: String(settings.maxSendRate),
    [ENV.maxConcurrency]: String(settings.maxConcurrency),
    POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
    POWERTOOLS_LOG_LEVEL: settings.logLevel,
    POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
  };
}
