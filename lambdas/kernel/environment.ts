/**
 * The functions' environment, both its names and its reading: the variables the construct and
 * the local pipeline write (lib/construct/handler-env.ts) and the typed settings each function
 * reads from them, through one reader whose errors name the variable at fault. Every default
 * lives in the settings declaration (lib/settings/declaration.ts), which writes every variable:
 * a function reads no default of its own.
 *
 * Why not Powertools' env utilities (`@aws-lambda-powertools/commons`): they read `process.env`
 * only, where these readers take any environment (the tests and the local pipeline pass one),
 * and their number parsing takes `1e3`, `0x10` and ` 12 `, which a setting must not.
 */
import type { TrustedOrigin } from './ledger/binding';
import { parseTeamRoutes, TEAM_NAME, TEAMS_ENV, type TeamRoutes } from './teams';

/** Environment variables of the send function (the ledger and status functions read the table and prefix too). */
export const ENV = {
  senderAddress: 'SENDER_ADDRESS',
  senderName: 'SENDER_NAME',
  topicArn: 'TOPIC_ARN',
  configurationSetName: 'SES_CONFIGURATION_SET',
  tableName: 'IDEMPOTENCY_TABLE_NAME',
  keyPrefix: 'IDEMPOTENCY_KEY_PREFIX',
  dedupeWindowSeconds: 'DEDUPE_WINDOW_SECONDS',
  sourceQueueUrl: 'SOURCE_QUEUE_URL',
  /** The schedule queue: a message not yet due waits there (the schedule function's lane), not in its own queue. */
  scheduleQueueUrl: 'SCHEDULE_QUEUE_URL',
  deadLetterQueueUrl: 'DEAD_LETTER_QUEUE_URL',
  maxReceiveCount: 'MAX_RECEIVE_COUNT',
  failOpen: 'FAIL_OPEN',
  sesTimeoutMs: 'SES_TIMEOUT_MS',
  retryBaseSeconds: 'RETRY_BASE_SECONDS',
  systemicRetrySeconds: 'SYSTEMIC_RETRY_SECONDS',
  retryCapSeconds: 'RETRY_CAP_SECONDS',
  retryBudgetSeconds: 'RETRY_BUDGET_SECONDS',
  maxScheduleAheadSeconds: 'MAX_SCHEDULE_AHEAD_SECONDS',
  maxSendRate: 'MAX_SEND_RATE',
  maxConcurrency: 'MAX_CONCURRENCY',
  /** Contract v1.2: the bucket of attachments sent by `s3Key` (read only). */
  attachmentsBucketName: 'ATTACHMENTS_BUCKET_NAME',
  /** The high-priority lane's queue: its records' retries go back there. */
  highPriorityQueueUrl: 'HIGH_PRIORITY_QUEUE_URL',
  /** The high-priority topic, the only source of that queue: its envelopes are the pipeline's too. */
  highPriorityTopicArn: 'HIGH_PRIORITY_TOPIC_ARN',
  /** Percent of maxSendRate reserved for the high-priority lane. */
  highPriorityRateShare: 'HIGH_PRIORITY_RATE_SHARE',
} as const;

/** Environment variables of the ledger-related functions (send-email, ledger and status). */
export const LEDGER_ENV = {
  /** Ledger table name (send-email, ledger and status functions). */
  tableName: 'LEDGER_TABLE_NAME',
  /** Topic that receives a message on every status change (ledger function). */
  deliveryStatusTopicArn: 'DELIVERY_STATUS_TOPIC_ARN',
  /** How long a ledger item lives (ledger function); the pipeline's dedupe window. */
  retentionSeconds: 'LEDGER_RETENTION_SECONDS',
  /** How long an unknown-fate send waits for its SES event before it is sent again (send-email). */
  sendConfirmationGraceSeconds: 'SEND_CONFIRMATION_GRACE_SECONDS',
  /** The account the pipeline sends from: `mail.sendingAccountId` of its events and the account of the bus they come on (ledger). */
  accountId: 'PIPELINE_ACCOUNT_ID',
  /** The configuration set every send uses: the `ses:configuration-set` tag of its events (ledger). */
  configurationSetName: 'CONFIGURATION_SET_NAME',
  /** The send function's role name: the `ses:caller-identity` tag of its events (ledger). */
  senderRoleName: 'SENDER_ROLE_NAME',
  /** The pipeline's teams, comma-separated: a status change of `<team>#<key>` names its team (ledger). */
  teamNames: 'TEAM_NAMES',
} as const;

export interface HandlerSettings {
  readonly senderAddress: string;
  /** Display name of the From address, as written (the handler encodes it). */
  readonly senderName?: string;
  /** The pipeline's topic: only its envelopes (and the high-priority topic's) are sent. */
  readonly topicArn: string;
  /** The high-priority topic, whose envelopes are sent too; none: one topic. */
  readonly highPriorityTopicArn?: string;
  readonly configurationSetName?: string;
  readonly tableName: string;
  readonly keyPrefix: string;
  readonly dedupeWindowSeconds: number;
  readonly sourceQueueUrl: string;
  /** Where a message not yet due waits for its `sendAt` (schedule.ts), off the lanes' queues. */
  readonly scheduleQueueUrl: string;
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
  /** How far after it reached the queue a message's `sendAt` may be (0: no scheduling; see schedule.ts). */
  readonly maxScheduleAheadSeconds: number;
  /** Recipients per second all containers together may send (see pacing.ts). */
  readonly maxSendRate: number;
  /** Most containers the event source runs at once: the static share, maxSendRate / maxConcurrency, when the shared lease is off. */
  readonly maxConcurrency: number;
  /** The high-priority queue (its own event source mapping); none: one lane. */
  readonly highPriorityQueueUrl?: string;
  /** Percent of maxSendRate reserved for high-priority mail (bulk borrows it while high is idle). */
  readonly highPriorityRateShare: number;
  /** The teams, by name: their topics (whose envelopes are sent too) and senders. @default none: one implicit team */
  readonly teams?: TeamRoutes;
}

/** An environment: `process.env` in a function, a plain object in tests and the local pipeline. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The one reader of a function's variables; every error names the variable and what it holds. */
export class EnvReader {
  constructor(private readonly env: Env = process.env) {}

  /** A variable that must be set and not blank. */
  required(name: string): string {
    const value = this.env[name];
    if (value === undefined || value.trim() === '') throw new Error(`Missing required environment variable ${name}`);
    return value;
  }

  /** A variable that may be absent or empty (then undefined). */
  optional(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  /** A whole number above 0, in plain digits. */
  positiveInt(name: string): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') throw new Error(`Missing required environment variable ${name}`);
    const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`Environment variable ${name} must be a positive integer, got "${raw}"`);
    }
    return value;
  }

  /** A whole number from 0, in plain digits; `fallback` when absent. */
  nonNegativeInt(name: string, fallback: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value))
      throw new Error(`Environment variable ${name} must be a whole number, got "${raw}"`);
    return value;
  }

  /** A whole number from 0, in plain digits. */
  wholeNumber(name: string): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') throw new Error(`Missing required environment variable ${name}`);
    const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value))
      throw new Error(`Environment variable ${name} must be a whole number, got "${raw}"`);
    return value;
  }

  /** `true` or `false` in any case; `fallback` when absent. */
  boolean(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined) return fallback;
    if (raw.toLowerCase() !== 'true' && raw.toLowerCase() !== 'false') {
      throw new Error(`Environment variable ${name} must be "true" or "false", got "${raw}"`);
    }
    return raw.toLowerCase() === 'true';
  }
}

/** Reads and checks the send function's settings; throws naming the variable at fault. */
export function readSettings(env: Env = process.env): HandlerSettings {
  const read = new EnvReader(env);
  const configurationSetName = read.optional(ENV.configurationSetName);
  const senderName = read.optional(ENV.senderName);
  const highPriorityQueueUrl = read.optional(ENV.highPriorityQueueUrl);
  const highPriorityTopicArn = read.optional(ENV.highPriorityTopicArn);
  const teams = parseTeamRoutes(read.optional(TEAMS_ENV), TEAMS_ENV);
  return {
    senderAddress: read.required(ENV.senderAddress),
    ...(senderName ? { senderName } : {}),
    topicArn: read.required(ENV.topicArn),
    ...(highPriorityTopicArn ? { highPriorityTopicArn } : {}),
    ...(configurationSetName ? { configurationSetName } : {}),
    tableName: read.required(ENV.tableName),
    keyPrefix: read.required(ENV.keyPrefix),
    dedupeWindowSeconds: read.positiveInt(ENV.dedupeWindowSeconds),
    sourceQueueUrl: read.required(ENV.sourceQueueUrl),
    scheduleQueueUrl: read.required(ENV.scheduleQueueUrl),
    deadLetterQueueUrl: read.required(ENV.deadLetterQueueUrl),
    maxReceiveCount: read.positiveInt(ENV.maxReceiveCount),
    failOpen: read.boolean(ENV.failOpen, false),
    sesTimeoutMs: read.positiveInt(ENV.sesTimeoutMs),
    retryBaseSeconds: read.positiveInt(ENV.retryBaseSeconds),
    systemicRetrySeconds: read.positiveInt(ENV.systemicRetrySeconds),
    retryCapSeconds: read.positiveInt(ENV.retryCapSeconds),
    retryBudgetSeconds: read.positiveInt(ENV.retryBudgetSeconds),
    maxScheduleAheadSeconds: read.wholeNumber(ENV.maxScheduleAheadSeconds),
    maxSendRate: read.positiveInt(ENV.maxSendRate),
    maxConcurrency: read.positiveInt(ENV.maxConcurrency),
    ...(highPriorityQueueUrl ? { highPriorityQueueUrl } : {}),
    highPriorityRateShare: read.nonNegativeInt(ENV.highPriorityRateShare, 0),
    ...(teams ? { teams } : {}),
  };
}

/** The schedule function's settings: the queue it waits in and the lanes' queues a due copy goes back to. */
export interface ScheduleSettings {
  readonly scheduleQueueUrl: string;
  /** The work queue (the normal lane). */
  readonly workQueueUrl: string;
  /** The high-priority queue; none: a copy of the high lane goes to the work queue. */
  readonly highPriorityQueueUrl?: string;
  /** The teams (their queues): a copy from a team's queue goes back there. @default none */
  readonly teams?: TeamRoutes;
}

/** Reads the schedule function's settings; throws naming the variable at fault. */
export function readScheduleSettings(env: Env = process.env): ScheduleSettings {
  const read = new EnvReader(env);
  const highPriorityQueueUrl = read.optional(ENV.highPriorityQueueUrl);
  const teams = parseTeamRoutes(read.optional(TEAMS_ENV), TEAMS_ENV);
  return {
    scheduleQueueUrl: read.required(ENV.scheduleQueueUrl),
    workQueueUrl: read.required(ENV.sourceQueueUrl),
    ...(highPriorityQueueUrl ? { highPriorityQueueUrl } : {}),
    ...(teams ? { teams } : {}),
  };
}

/** The send function's confirm-before-resend settings. */
export interface ConfirmSettings {
  /** The ledger table; none: confirmation is off (every retry sends, as before the ledger). */
  readonly ledgerTableName?: string;
  /** How long an unknown-fate send waits for its SES event before it is sent again. */
  readonly graceSeconds: number;
  /** How long a dead-letter mark keeps the ledger item (the dedupe window). */
  readonly retentionSeconds: number;
}

/** Reads the send function's confirm settings; `retentionSeconds` is its dedupe window. */
export function readConfirmSettings(env: Env, retentionSeconds: number): ConfirmSettings {
  const read = new EnvReader(env);
  const ledgerTableName = read.optional(LEDGER_ENV.tableName);
  const graceSeconds = read.positiveInt(LEDGER_ENV.sendConfirmationGraceSeconds);
  return { ...(ledgerTableName ? { ledgerTableName } : {}), graceSeconds, retentionSeconds };
}

/** What the ledger believes: its events' origin, and the claims their sends were made under. */
export interface LedgerTrust {
  readonly origin: TrustedOrigin;
  /** The send function's idempotency table, where the claims are. */
  readonly claimsTableName: string;
  /** The send function's idempotency key prefix (its record ids are `<prefix>#<hash>`). */
  readonly keyPrefix: string;
}

export interface LedgerSettings {
  readonly tableName: string;
  readonly retentionSeconds: number;
  /** Where status changes go; none: not published. */
  readonly deliveryStatusTopicArn?: string;
  readonly trust: LedgerTrust;
  /** The pipeline's teams (none without teams): a status change of a team's key carries the team. */
  readonly teamNames?: readonly string[];
}

/** Reads the ledger function's settings; throws naming the variable at fault. */
export function readLedgerSettings(env: Env = process.env): LedgerSettings {
  const read = new EnvReader(env);
  const tableName = read.required(LEDGER_ENV.tableName);
  const retentionSeconds = read.positiveInt(LEDGER_ENV.retentionSeconds);
  const topic = read.optional(LEDGER_ENV.deliveryStatusTopicArn);
  const trust: LedgerTrust = {
    origin: {
      accountId: read.required(LEDGER_ENV.accountId),
      configurationSetName: read.required(LEDGER_ENV.configurationSetName),
      senderRoleName: read.required(LEDGER_ENV.senderRoleName),
    },
    claimsTableName: read.required(ENV.tableName),
    keyPrefix: read.required(ENV.keyPrefix),
  };
  const teams = read.optional(LEDGER_ENV.teamNames);
  const teamNames = teams ? teams.split(',') : [];
  const bad = teamNames.find((name) => !TEAM_NAME.test(name));
  if (bad !== undefined) {
    throw new Error(
      `Environment variable ${LEDGER_ENV.teamNames} names ${JSON.stringify(bad)}, which cannot be a team`,
    );
  }
  return {
    tableName,
    retentionSeconds,
    ...(topic ? { deliveryStatusTopicArn: topic } : {}),
    trust,
    ...(teamNames.length > 0 ? { teamNames } : {}),
  };
}

/** The tables the status and cancel functions use, and the send function's key prefix. */
export interface StatusSettings {
  readonly ledgerTableName: string;
  readonly idempotencyTableName: string;
  readonly keyPrefix: string;
  /** How long a cancel mark keeps a key cancelled: the send function's dedupe window. */
  readonly dedupeWindowSeconds: number;
}

/** Reads the status (and cancel) function's settings; throws naming the variable at fault. */
export function readStatusSettings(env: Env = process.env): StatusSettings {
  const read = new EnvReader(env);
  return {
    ledgerTableName: read.required(LEDGER_ENV.tableName),
    idempotencyTableName: read.required(ENV.tableName),
    keyPrefix: read.required(ENV.keyPrefix),
    dedupeWindowSeconds: read.positiveInt(ENV.dedupeWindowSeconds),
  };
}
