import { LEDGER_ENV } from '../lambdas/ledger/schema';
import { ENV } from '../lambdas/send-email/settings';
import type { ResolvedSettings } from './config';
import { SETTINGS, type SettingName } from './settings-declaration';

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

/** The settings the handler reads: those the declaration gives an environment variable. */
type HandlerSettingName = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { readonly env: string } ? K : never;
}[SettingName];

/** The variables of the resources, by {@link HandlerResourceRefs} field. */
const RESOURCE_ENV: Readonly<Record<keyof HandlerResourceRefs, string>> = {
  topicArn: ENV.topicArn,
  tableName: ENV.tableName,
  sourceQueueUrl: ENV.sourceQueueUrl,
  deadLetterQueueUrl: ENV.deadLetterQueueUrl,
  ledgerTableName: LEDGER_ENV.tableName,
};

/**
 * The order the handler's variables are written in (a function's template keeps
 * it): settings by name, their variables from the declaration; resources by ref.
 */
const LAYOUT = [
  'senderAddress',
  'senderName',
  'topicArn',
  'configurationSetName',
  'tableName',
  'idempotencyKeyPrefix',
  'dedupeWindowSeconds',
  'sourceQueueUrl',
  'deadLetterQueueUrl',
  'maxReceiveCount',
  'failOpen',
  'ledgerTableName',
  'sendConfirmationGraceSeconds',
  'retryBudgetSeconds',
  'maxSendRate',
  'maxConcurrency',
  'serviceName',
  'logLevel',
  'metricsNamespace',
  'sesTimeoutMs',
  'retryBaseSeconds',
  'systemicRetrySeconds',
  'retryCapSeconds',
] as const satisfies readonly (HandlerSettingName | keyof HandlerResourceRefs | 'serviceName')[];

/** Compiles only while {@link LAYOUT} places every setting the declaration gives a variable. */
const EVERY_HANDLER_SETTING_PLACED: [Exclude<HandlerSettingName, (typeof LAYOUT)[number]>] extends [never]
  ? true
  : false = true;
void EVERY_HANDLER_SETTING_PLACED;

/**
 * The handler's environment, built from the resolved settings and the
 * declaration's variable names. The CDK construct and the local pipeline both
 * call this, so a setting cannot reach one and miss the other.
 */
export function handlerEnvironment(settings: ResolvedSettings, refs: HandlerResourceRefs): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of LAYOUT) {
    if (name === 'serviceName') {
      environment.POWERTOOLS_SERVICE_NAME = SERVICE_NAME;
    } else if (Object.hasOwn(RESOURCE_ENV, name)) {
      const value = refs[name as keyof HandlerResourceRefs];
      if (value !== undefined) environment[RESOURCE_ENV[name as keyof HandlerResourceRefs]] = value;
    } else {
      const value = settings[name as HandlerSettingName];
      if (value !== undefined && value !== '') environment[SETTINGS[name as HandlerSettingName].env] = String(value);
    }
  }
  return environment;
}

/** Names of the resources the ledger function writes to (CDK tokens in a stack, real values locally). */
export interface LedgerResourceRefs {
  readonly tableName: string;
  readonly deliveryStatusTopicArn: string;
}

/**
 * What the ledger function trusts (lambdas/ledger/binding.ts): where the pipeline's own SES events
 * come from, and the send function's claims, which record every send's attempt id.
 */
export interface LedgerTrustRefs {
  /** The SES events topic. */
  readonly eventsTopicArn: string;
  /** The account the pipeline sends from. */
  readonly accountId: string;
  readonly configurationSetName: string;
  /** The send function's IAM role name (SES's `ses:caller-identity`). */
  readonly senderRoleName: string;
  /** The send function's idempotency table. */
  readonly claimsTableName: string;
}

/**
 * The ledger function's own settings: its table, the topic it publishes status changes to, and
 * how long a ledger item lives (the dedupe window). The CDK construct, the local pipeline and the
 * benchmark all build the ledger's environment here.
 */
export function ledgerEnvironment(
  settings: Pick<ResolvedSettings, 'dedupeWindowSeconds' | 'idempotencyKeyPrefix'>,
  refs: LedgerResourceRefs,
  trust: LedgerTrustRefs,
): Record<string, string> {
  return {
    [LEDGER_ENV.tableName]: refs.tableName,
    [LEDGER_ENV.deliveryStatusTopicArn]: refs.deliveryStatusTopicArn,
    [LEDGER_ENV.retentionSeconds]: String(settings.dedupeWindowSeconds),
    [LEDGER_ENV.eventsTopicArn]: trust.eventsTopicArn,
    [LEDGER_ENV.accountId]: trust.accountId,
    [LEDGER_ENV.configurationSetName]: trust.configurationSetName,
    [LEDGER_ENV.senderRoleName]: trust.senderRoleName,
    [ENV.tableName]: trust.claimsTableName,
    [ENV.keyPrefix]: settings.idempotencyKeyPrefix,
  };
}
