/**
 * The send-email, ledger and schedule functions' environment, built from the settings and the names of the
 * resources: one mapping for the construct (CDK tokens), the local pipeline and the benchmark (real
 * names), so a setting cannot reach one and miss the other. Also the idempotency table's shape.
 */
import { ENV, LEDGER_ENV } from '../../lambdas/kernel/environment';
import { CALLBACK_ENV, CALLBACK_TIMEOUT_MS, type CallbackTargets } from '../../lambdas/kernel/callbacks/names';
import { TEAMS_ENV, type TeamRoutes } from '../../lambdas/kernel/teams';
import type { ResolvedSettings } from '../settings';
import { SETTINGS, type SettingName } from '../settings';

/** The ledger and status functions' memory, MB (their local consumers run with it too). */
export const LEDGER_FUNCTION_MEMORY_MB = 256;

/** Fixed sizing of the schedule function (lib/construct/pipeline/schedule-function.ts; its local consumer too): one SendMessage per record, nothing held. */
export const SCHEDULE_FUNCTION = {
  memorySizeMb: 128,
  /** The schedule queue's visibility timeout is six times this. */
  timeoutSeconds: 30,
  batchSize: 10,
  /**
   * Concurrent invocations of its mapping: each moves ten copies in tens of milliseconds, so five
   * move several hundred a second (a million emails scheduled a day ahead make about 1,100 hops a
   * second: BENCHMARKS.md, 5c), and never more than five of the account's concurrency.
   */
  maxConcurrency: 5,
} as const;

/**
 * The size of each of V8's two semi-spaces (the young generation, where short-lived objects live
 * until a scavenge) for a function of `memoryMb`: 1/32 of the memory, at most 16 MiB (a 512 MB
 * function: 16; the 256 MB ledger and status functions: 8). Left to itself, the V8 of Node 22 and
 * later sizes them from the memory the process sees, not the function's: 64 MiB each on a 24 GiB
 * host (Node 20: 16), a young generation of up to 192 MiB that a busy container fills with garbage
 * before it collects. That was the soak's doubled memory (BENCHMARKS.md, "The soak").
 */
export function semiSpaceMb(memoryMb: number): number {
  return Math.max(1, Math.min(16, Math.floor(memoryMb / 32)));
}

/**
 * NODE_OPTIONS of a function of `memoryMb` (and of its local consumer): stack traces mapped to our
 * sources, and the young generation sized to the function ({@link semiSpaceMb}).
 */
export function functionNodeOptions(memoryMb: number): string {
  return `--enable-source-maps --max-semi-space-size=${semiSpaceMb(memoryMb)}`;
}

/** The service name in logs and the `service` metric dimension. */
export const SERVICE_NAME = 'email-pipeline';

/**
 * The idempotency table as Powertools' DynamoDB persistence layer expects it by
 * default: partition key `id`, record expiry in `expiration` (the TTL attribute).
 */
export const IDEMPOTENCY_TABLE = { partitionKey: 'id', ttlAttribute: 'expiration' } as const;

/** Names of the resources the handler talks to (CDK tokens in a stack, real values locally). */
export interface HandlerResourceRefs {
  /** The pipeline's topic: the handler sends only envelopes from it (and from the high-priority topic). */
  readonly topicArn: string;
  /** The high-priority topic (HIGH_PRIORITY_TOPIC_ARN), the high-priority queue's only source. @default none: one topic */
  readonly highPriorityTopicArn?: string;
  readonly tableName: string;
  readonly sourceQueueUrl: string;
  /** The schedule queue (SCHEDULE_QUEUE_URL): a message not yet due waits there. */
  readonly scheduleQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** The high-priority queue (HIGH_PRIORITY_QUEUE_URL): its retries go back there. @default none: one lane */
  readonly highPriorityQueueUrl?: string;
  /** The send ledger's table (LEDGER_TABLE_NAME). @default none: no ledger lookups */
  readonly ledgerTableName?: string;
  /** The bucket of attachments sent by s3Key (contract v1.2). */
  readonly attachmentsBucketName?: string;
  /** The teams' topics and senders (TEAMS, JSON). @default none: no teams, the variable is not written */
  readonly teams?: TeamRoutes;
  /**
   * The callbacks queue and who has a callback: the send function tells them of a key it
   * dead-letters (lambdas/send-email/outcome/dead-letter-notice.ts). @default none: no callbacks
   */
  readonly callbacks?: { readonly queueUrl: string; readonly targetNames: readonly string[] };
}

/** The settings the handler reads: those the declaration gives an environment variable. */
type HandlerSettingName = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { readonly env: string } ? K : never;
}[SettingName];

/** The variables of the resources, by {@link HandlerResourceRefs} field (teams: written apart, as JSON). */
const RESOURCE_ENV: Readonly<Record<Exclude<keyof HandlerResourceRefs, 'teams' | 'callbacks'>, string>> = {
  topicArn: ENV.topicArn,
  highPriorityTopicArn: ENV.highPriorityTopicArn,
  tableName: ENV.tableName,
  sourceQueueUrl: ENV.sourceQueueUrl,
  scheduleQueueUrl: ENV.scheduleQueueUrl,
  deadLetterQueueUrl: ENV.deadLetterQueueUrl,
  highPriorityQueueUrl: ENV.highPriorityQueueUrl,
  ledgerTableName: LEDGER_ENV.tableName,
  attachmentsBucketName: ENV.attachmentsBucketName,
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
  'scheduleQueueUrl',
  'deadLetterQueueUrl',
  'maxReceiveCount',
  'failOpen',
  'ledgerTableName',
  'sendConfirmationGraceSeconds',
  'retryBudgetSeconds',
  'maxScheduleAheadSeconds',
  'maxSendRate',
  'maxConcurrency',
  'serviceName',
  'logLevel',
  'metricsNamespace',
  'sesTimeoutMs',
  'retryBaseSeconds',
  'systemicRetrySeconds',
  'retryCapSeconds',
  'attachmentsBucketName',
  'highPriorityQueueUrl',
  'highPriorityTopicArn',
  'highPriorityRateShare',
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
      const field = name as keyof typeof RESOURCE_ENV;
      const value = refs[field];
      if (value !== undefined) environment[RESOURCE_ENV[field]] = value;
    } else {
      const value = settings[name as HandlerSettingName];
      if (value !== undefined && value !== '') environment[SETTINGS[name as HandlerSettingName].env] = String(value);
    }
  }
  // Last, and only with teams: a pipeline without them keeps its environment (and template) as it was.
  // Topic ARNs need no escaping, so their tokens survive JSON.stringify and resolve at deploy.
  if (refs.teams !== undefined && Object.keys(refs.teams).length > 0)
    environment[TEAMS_ENV] = JSON.stringify(refs.teams);
  // Only with callbacks, last for the same reason.
  if (refs.callbacks !== undefined) {
    environment[CALLBACK_ENV.queueUrl] = refs.callbacks.queueUrl;
    environment[CALLBACK_ENV.targetNames] = refs.callbacks.targetNames.join(',');
  }
  return environment;
}

/** The queues the schedule function knows (CDK tokens in a stack, real values locally). */
export interface ScheduleResourceRefs {
  /** Where not-yet-due copies wait: its source, and where a copy still not due goes back. */
  readonly scheduleQueueUrl: string;
  /** The work queue: where a due copy of the normal lane goes. */
  readonly workQueueUrl: string;
  /** The high-priority queue: where a due copy of the high lane goes. */
  readonly highPriorityQueueUrl: string;
  /** The teams (their queues: where a due copy from a team's queue goes). @default none */
  readonly teams?: TeamRoutes;
}

/**
 * The schedule function's environment: its queues, and the metric namespace of the settings (its
 * ScheduleHops count with the send function's, under the same `service`).
 */
export function scheduleEnvironment(
  settings: Pick<ResolvedSettings, 'metricsNamespace' | 'logLevel'>,
  refs: ScheduleResourceRefs,
  serviceName: string = SERVICE_NAME,
): Record<string, string> {
  return {
    [ENV.scheduleQueueUrl]: refs.scheduleQueueUrl,
    [ENV.sourceQueueUrl]: refs.workQueueUrl,
    [ENV.highPriorityQueueUrl]: refs.highPriorityQueueUrl,
    POWERTOOLS_SERVICE_NAME: serviceName,
    POWERTOOLS_LOG_LEVEL: settings.logLevel,
    POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
    ...(refs.teams !== undefined && Object.keys(refs.teams).length > 0
      ? { [TEAMS_ENV]: JSON.stringify(refs.teams) }
      : {}),
  };
}

/** Where genuine SES events come from: the ledger function takes no event from elsewhere. */
export interface LedgerEventOrigin {
  /** The pipeline's AWS account (an event's `mail.sendingAccountId`, and the account of the bus it came on). */
  readonly accountId: string;
  /** The configuration set every send uses (an event's `ses:configuration-set` tag). */
  readonly configurationSetName: string;
  /** The send function's IAM role name (an event's `ses:caller-identity` tag). */
  readonly senderRoleName: string;
}

/** Names of the resources the ledger function writes to and reads (CDK tokens in a stack, real values locally). */
export interface LedgerResourceRefs {
  readonly tableName: string;
  readonly deliveryStatusTopicArn: string;
  /** Where genuine events come from. @default none given: the origin variables are left out */
  readonly origin?: LedgerEventOrigin;
  /**
   * The send function's idempotency table, which the ledger function reads (GetItem) with the key
   * prefix of the settings. @default none given: neither variable is set
   */
  readonly idempotencyTableName?: string;
}

/**
 * The ledger function's own settings: its table, the topic it publishes status changes to, how
 * long a ledger item lives (the dedupe window), where genuine events come from, the send
 * function's idempotency table and key prefix, and the teams' names (with teams). The CDK construct, the local pipeline and the
 * benchmark all build the ledger's environment here.
 */
export function ledgerEnvironment(
  settings: Pick<ResolvedSettings, 'dedupeWindowSeconds' | 'idempotencyKeyPrefix'> & Pick<ResolvedSettings, 'teams'>,
  refs: LedgerResourceRefs,
): Record<string, string> {
  const environment: Record<string, string> = {
    [LEDGER_ENV.tableName]: refs.tableName,
    [LEDGER_ENV.deliveryStatusTopicArn]: refs.deliveryStatusTopicArn,
    [LEDGER_ENV.retentionSeconds]: String(settings.dedupeWindowSeconds),
  };
  // Only with teams (a pipeline without them keeps its template): status changes name their team.
  const teamNames = Object.keys(settings.teams ?? {});
  if (teamNames.length > 0) environment[LEDGER_ENV.teamNames] = teamNames.join(',');
  if (refs.origin !== undefined) {
    environment[LEDGER_ENV.accountId] = refs.origin.accountId;
    environment[LEDGER_ENV.configurationSetName] = refs.origin.configurationSetName;
    environment[LEDGER_ENV.senderRoleName] = refs.origin.senderRoleName;
  }
  if (refs.idempotencyTableName !== undefined) {
    environment[ENV.tableName] = refs.idempotencyTableName;
    environment[ENV.keyPrefix] = settings.idempotencyKeyPrefix;
  }
  return environment;
}

/** The callback function's resources (CDK tokens in a stack, real values locally). */
export interface CallbackResourceRefs {
  readonly tableName: string;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** Each callback's URL, statuses and secret (its ARN on AWS; the secret itself locally). */
  readonly targets: CallbackTargets;
  /** Locally only: URLs may name 127.0.0.1 and use http. @default false */
  readonly allowPrivateAddresses?: boolean;
}

/** The callback function's environment: its resources, targets and retry settings. */
export function callbackEnvironment(
  settings: Pick<
    ResolvedSettings,
    'metricsNamespace' | 'logLevel' | 'callbackRetryBaseSeconds' | 'callbackRetryWindowSeconds'
  >,
  refs: CallbackResourceRefs,
  serviceName: string = SERVICE_NAME,
): Record<string, string> {
  return {
    [CALLBACK_ENV.tableName]: refs.tableName,
    [CALLBACK_ENV.queueUrl]: refs.queueUrl,
    [CALLBACK_ENV.deadLetterQueueUrl]: refs.deadLetterQueueUrl,
    [CALLBACK_ENV.targets]: JSON.stringify(refs.targets),
    [CALLBACK_ENV.retryBaseSeconds]: String(settings.callbackRetryBaseSeconds),
    [CALLBACK_ENV.retryWindowSeconds]: String(settings.callbackRetryWindowSeconds),
    [CALLBACK_ENV.timeoutMs]: String(CALLBACK_TIMEOUT_MS),
    ...(refs.allowPrivateAddresses ? { [CALLBACK_ENV.allowPrivateAddresses]: 'true' } : {}),
    POWERTOOLS_SERVICE_NAME: serviceName,
    POWERTOOLS_LOG_LEVEL: settings.logLevel,
    POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
  };
}
