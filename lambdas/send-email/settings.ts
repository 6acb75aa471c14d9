/**
 * The handler's runtime settings, read from environment variables.
 *
 * The names are shared with the CDK construct and the local pipeline so that
 * the deployed function and the local one are configured the same way.
 */
export const ENV = {
  senderAddress: 'SENDER_ADDRESS',
  senderName: 'SENDER_NAME',
  topicArn: 'TOPIC_ARN',
  configurationSetName: 'SES_CONFIGURATION_SET',
  tableName: 'IDEMPOTENCY_TABLE_NAME',
  keyPrefix: 'IDEMPOTENCY_KEY_PREFIX',
  dedupeWindowSeconds: 'DEDUPE_WINDOW_SECONDS',
  sourceQueueUrl: 'SOURCE_QUEUE_URL',
  deadLetterQueueUrl: 'DEAD_LETTER_QUEUE_URL',
  maxReceiveCount: 'MAX_RECEIVE_COUNT',
  failOpen: 'FAIL_OPEN',
  sesTimeoutMs: 'SES_TIMEOUT_MS',
  retryBaseSeconds: 'RETRY_BASE_SECONDS',
  systemicRetrySeconds: 'SYSTEMIC_RETRY_SECONDS',
  retryCapSeconds: 'RETRY_CAP_SECONDS',
  retryBudgetSeconds: 'RETRY_BUDGET_SECONDS',
  maxSendRate: 'MAX_SEND_RATE',
  maxConcurrency: 'MAX_CONCURRENCY',
} as const;

export interface HandlerSettings {
  readonly senderAddress: string;
  /** Display name of the From address, as written (the handler encodes it). */
  readonly senderName?: string;
  /** The pipeline's topic: only its envelopes are sent. */
  readonly topicArn: string;
  readonly configurationSetName?: string;
  readonly tableName: string;
  readonly keyPrefix: string;
  readonly dedupeWindowSeconds: number;
  readonly sourceQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly maxReceiveCount: number;
  readonly failOpen: boolean;
  /** How long one SES request may take. */
  readonly sesTimeoutMs: number;
  /** First backoff of a retryable or ambiguous failure; doubles per receive. */
  readonly retryBaseSeconds: number;
  /** First backoff of a systemic failure (account paused, quota). */
  readonly systemicRetrySeconds: number;
  /** Longest backoff of a retryable or ambiguous failure. */
  readonly retryCapSeconds: number;
  /** How long after it first reached the queue a message may still be retried (see retry-budget.ts). */
  readonly retryBudgetSeconds: number;
  /** Recipients per second all containers together may send (see pacing.ts). */
  readonly maxSendRate: number;
  /** Most containers the event source runs at once: each paces to maxSendRate / maxConcurrency. */
  readonly maxConcurrency: number;
}

/** Defaults of the optional tuning variables; the CDK construct documents its props with these. */
export const HANDLER_DEFAULTS = {
  sesTimeoutMs: 5000,
  retryBaseSeconds: 2,
  systemicRetrySeconds: 300,
  retryCapSeconds: 300,
} as const;

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

function positiveInt(env: Env, name: string, fallback?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw new Error(`Missing required environment variable ${name}`);
  }
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`Environment variable ${name} must be a positive integer, got "${raw}"`);
  }
  return value;
}

/** Reads and checks the handler settings; throws naming the variable at fault. */
export function readSettings(env: Env = process.env): HandlerSettings {
  const failOpenRaw = env[ENV.failOpen] ?? 'false';
  if (failOpenRaw.toLowerCase() !== 'true' && failOpenRaw.toLowerCase() !== 'false') {
    throw new Error(`Environment variable ${ENV.failOpen} must be "true" or "false", got "${failOpenRaw}"`);
  }
  const configurationSetName = env[ENV.configurationSetName];
  const senderName = env[ENV.senderName];
  return {
    senderAddress: required(env, ENV.senderAddress),
    ...(senderName ? { senderName } : {}),
    topicArn: required(env, ENV.topicArn),
    ...(configurationSetName ? { configurationSetName } : {}),
    tableName: required(env, ENV.tableName),
    keyPrefix: required(env, ENV.keyPrefix),
    dedupeWindowSeconds: positiveInt(env, ENV.dedupeWindowSeconds),
    sourceQueueUrl: required(env, ENV.sourceQueueUrl),
    deadLetterQueueUrl: required(env, ENV.deadLetterQueueUrl),
    maxReceiveCount: positiveInt(env, ENV.maxReceiveCount),
    failOpen: failOpenRaw.toLowerCase() === 'true',
    sesTimeoutMs: positiveInt(env, ENV.sesTimeoutMs, HANDLER_DEFAULTS.sesTimeoutMs),
    retryBaseSeconds: positiveInt(env, ENV.retryBaseSeconds, HANDLER_DEFAULTS.retryBaseSeconds),
    systemicRetrySeconds: positiveInt(env, ENV.systemicRetrySeconds, HANDLER_DEFAULTS.systemicRetrySeconds),
    retryCapSeconds: positiveInt(env, ENV.retryCapSeconds, HANDLER_DEFAULTS.retryCapSeconds),
    retryBudgetSeconds: positiveInt(env, ENV.retryBudgetSeconds),
    maxSendRate: positiveInt(env, ENV.maxSendRate),
    maxConcurrency: positiveInt(env, ENV.maxConcurrency),
  };
}
