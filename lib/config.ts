/**
 * One place that turns settings (construct props, or cdk.json / `-c key=value`
 * context) into validated, fully resolved values. The CDK construct and the
 * local pipeline both use {@link resolveSettings}, so they cannot drift apart.
 *
 * This module is plain TypeScript with no aws-cdk-lib import: the local
 * pipeline and the tools load it without paying for the CDK.
 */
import { closest } from 'fastest-levenshtein';
import { displayNameProblem, parseAddress } from '../lambdas/kernel/contract/address';
import { SETTINGS, valueDefaults, type SettingKind } from './settings-declaration';

/** Log levels understood by Powertools Logger. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const DAY = 24 * 60 * 60;

/**
 * Retention values CloudWatch Logs accepts, in days (aws-cdk-lib's `logs.RetentionDays` without
 * INFINITE; a unit test keeps the two equal). Here, not in the construct, so that the local
 * pipeline refuses what the synth refuses.
 */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/**
 * Settings of the pipeline, in plain numbers (seconds, megabytes).
 * Every optional field documents its default.
 */
export interface PipelineSettings {
  /**
   * The From address of every email: a bare ASCII address (`noreply@example.com`,
   * domain in punycode), checked by the message contract's address rules.
   * Required; never taken from a message.
   */
  readonly senderAddress: string;
  /**
   * Display name of the From address (`Example Shop` gives
   * `Example Shop <noreply@example.com>`); non-ASCII names are RFC 2047-encoded
   * for SES. @default none (the bare address)
   */
  readonly senderName?: string;
  /**
   * The verified SES identity that sends (a domain such as `example.com`, or an
   * email address). Required; lower-cased, since IAM matches the identity ARN
   * case-sensitively.
   */
  readonly sesIdentity: string;
  /** SES configuration set for sends. @default none */
  readonly configurationSetName?: string;
  /** How long SQS keeps an unprocessed message. @default 345600 (4 days, the SQS default) */
  readonly retentionPeriodSeconds?: number;
  /**
   * How long an idempotency record keeps a key claimed. Must cover every path a
   * copy can take back: the queue's retention plus the DLQ's (a copy can wait
   * out its retention, be dead-lettered, and be redriven as a new message late
   * in the DLQ's 14 days). See {@link allowShortDedupeWindow}.
   * @default retention period + DLQ retention (14 days) + 1 day
   */
  readonly dedupeWindowSeconds?: number;
  /**
   * Accept a dedupeWindowSeconds shorter than retention + DLQ retention (it must
   * still cover the retention period). Only for pipelines whose DLQ is never
   * redriven late, or whose records must expire sooner: a copy redriven after
   * its record expired is sent again. @default false
   */
  readonly allowShortDedupeWindow?: boolean;
  /** Lambda timeout. @default 30 */
  readonly functionTimeoutSeconds?: number;
  /** Lambda memory. @default 256 */
  readonly memorySizeMb?: number;
  /**
   * Queue visibility timeout. Must be at least 6 x the function timeout.
   * @default 6 x function timeout
   */
  readonly visibilityTimeoutSeconds?: number;
  /** Records per Lambda invocation. @default 10 */
  readonly batchSize?: number;
  /** How long the event source waits to fill a batch. @default 1 */
  readonly maxBatchingWindowSeconds?: number;
  /** Most concurrent invocations the event source starts (2 to 1000). @default 10 */
  readonly maxConcurrency?: number;
  /** Receives before a message moves to the DLQ (at least 5). @default 5 */
  readonly maxReceiveCount?: number;
  /**
   * Prefix of every idempotency record. Stable on purpose: the default in
   * Powertools is the function name, which changes when a function is replaced.
   * @default "email-pipeline"
   */
  readonly idempotencyKeyPrefix?: string;
  /**
   * When the idempotency store is unavailable, send anyway (counted) instead of
   * leaving the message in the queue. @default false (fail closed)
   */
  readonly failOpen?: boolean;
  /** Lambda log level. @default "INFO" */
  readonly logLevel?: LogLevel;
  /** CloudWatch namespace of the custom metrics. @default "EmailPipeline" */
  readonly metricsNamespace?: string;
  /** How long the function's logs are kept, in days. @default 30 */
  readonly logRetentionDays?: number;
  /**
   * How long a send whose outcome is unknown (ambiguous SES answer, or a claim
   * that died with its invocation) waits for its SES `Send` event before it is
   * sent again. SES usually publishes within seconds; must be shorter than the
   * retention period.
   * @default 300
   */
  readonly sendConfirmationGraceSeconds?: number;
  /**
   * How long after a message first reached the queue a retryable, systemic or
   * ambiguous failure may still be retried. Past it the message goes to the DLQ
   * with reason `RetryBudgetExhausted` and its last error. Long enough to wait
   * out a regional outage of hours.
   * @default 86400 (24 hours)
   */
  readonly retryBudgetSeconds?: number;
  /**
   * Recipients per second this pipeline may use of the account's SES sending
   * rate (SES counts recipients, not requests). Every container paces to its
   * share, maxSendRate / maxConcurrency.
   * @default 14 (the rate of a new production SES account)
   */
  readonly maxSendRate?: number;
  /**
   * The alarm for messages that keep retrying fires when a retried message is
   * older than this.
   * @default 900 (15 minutes)
   */
  readonly retryingTooLongSeconds?: number;
  /**
   * Timeout of one SES SendEmail call, in milliseconds (SES_TIMEOUT_MS). Must
   * leave room inside the function timeout (at most half of it).
   * @default 5000, or half the function timeout when that is shorter
   */
  readonly sesTimeoutMs?: number;
  /**
   * First backoff of a retryable or ambiguous failure, in seconds
   * (RETRY_BASE_SECONDS); the handler doubles it per receive, with jitter.
   * @default 2
   */
  readonly retryBaseSeconds?: number;
  /**
   * First backoff of a systemic failure (account paused, daily quota), in
   * seconds (SYSTEMIC_RETRY_SECONDS).
   * @default 300
   */
  readonly systemicRetrySeconds?: number;
  /**
   * Longest backoff of a retryable or ambiguous failure, in seconds
   * (RETRY_CAP_SECONDS): the doubling stops here.
   * @default 300
   */
  readonly retryCapSeconds?: number;
}

/** {@link PipelineSettings} with every default applied. */
export type ResolvedSettings = Required<Omit<PipelineSettings, 'configurationSetName' | 'senderName'>> &
  Pick<PipelineSettings, 'configurationSetName' | 'senderName'>;

/**
 * Defaults: every one-value default of the declaration (lib/settings-declaration.ts),
 * and the factors the derived ones are built from.
 */
export const DEFAULTS = {
  ...valueDefaults(),
  dedupeWindowMarginSeconds: DAY,
  visibilityFactor: 6,
} as const;

/**
 * The longest one copy of a message waits before its next attempt: SQS's
 * largest DelaySeconds, and the backoff cap of the handler (retry-budget.ts).
 */
export const MAX_RETRY_DELAY_SECONDS = 900;

/** The DLQ keeps messages for the SQS maximum, so operators have time to look. */
export const DLQ_RETENTION_SECONDS = 14 * DAY;

/** Lower bound on maxReceiveCount, as AWS advises for Lambda event sources. */
export const MIN_MAX_RECEIVE_COUNT = 5;

/** A setting that breaks a rule. The message names the setting, its value and the rule. */
export class SettingsError extends Error {
  constructor(
    readonly setting: string,
    readonly value: unknown,
    readonly rule: string,
  ) {
    super(`Invalid setting ${setting}=${JSON.stringify(value)}: ${rule}`);
    this.name = 'SettingsError';
  }
}

function checkInt(name: string, value: number, min: number, max: number, unit = ''): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new SettingsError(name, value, `must be a whole number from ${min} to ${max}${unit}`);
  }
}

const DOMAIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const PREFIX = /^[A-Za-z0-9._-]{1,64}$/;
const NAMESPACE = /^[A-Za-z0-9._/#:-]{1,255}$/;

/** The part after the @, lower-cased. */
function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Why `value` cannot be a configured address (sender, email identity, alarm
 * recipient), or undefined: the message contract's rules, and a bare address
 * as written (no display name, punycode domain, no IAM wildcards).
 */
export function configuredAddressProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be an email address such as noreply@example.com';
  const parsed = parseAddress(value);
  if (!parsed.ok) {
    // "must be an email address like name@example.com" says it all; "has an invalid domain" needs the lead-in.
    return parsed.reason.startsWith('must be an email address')
      ? parsed.reason
      : `must be an email address such as noreply@example.com: it ${parsed.reason}`;
  }
  if (parsed.value.displayName !== undefined || /[<>]/.test(value)) {
    return 'must be a bare address without a display name (set senderName for the From name)';
  }
  if (parsed.value.address !== value) {
    return `must be written as SES takes it: ${parsed.value.address} (domain in punycode, no spaces)`;
  }
  if (/[*?]/.test(value)) return 'must not contain * or ?, which IAM conditions read as wildcards';
  return undefined;
}

/**
 * Applies defaults and checks every rule, including the synth-time invariants
 * of the design: visibility timeout >= 6 x function timeout, dedupe window >=
 * retention period, maxReceiveCount >= 5. Throws {@link SettingsError}.
 */
export function resolveSettings(input: PipelineSettings): ResolvedSettings {
  const { senderAddress } = input;
  const senderProblem = configuredAddressProblem(senderAddress);
  if (senderProblem !== undefined) throw new SettingsError('senderAddress', senderAddress, senderProblem);
  const written: unknown = input.sesIdentity;
  const identityIsAddress = typeof written === 'string' && written.includes('@');
  if (
    typeof written !== 'string' ||
    (identityIsAddress ? configuredAddressProblem(written) !== undefined : !DOMAIN.test(written))
  ) {
    throw new SettingsError(
      'sesIdentity',
      written,
      'must be a verified SES identity: a domain (punycode) or an email address',
    );
  }
  // IAM compares the identity ARN case-sensitively; SES identities are not case-sensitive.
  const sesIdentity = identityIsAddress
    ? `${written.slice(0, written.lastIndexOf('@'))}@${domainOf(written)}`
    : written.toLowerCase();
  const senderName = input.senderName;
  if (senderName !== undefined) {
    const problem =
      typeof senderName !== 'string' || senderName.trim() === ''
        ? 'must be a non-empty string'
        : displayNameProblem(senderName);
    if (problem !== undefined) throw new SettingsError('senderName', senderName, problem);
  }
  const identityMatches = sesIdentity.includes('@')
    ? sesIdentity.toLowerCase() === senderAddress.toLowerCase()
    : domainOf(senderAddress) === sesIdentity.toLowerCase();
  if (!identityMatches) {
    throw new SettingsError('senderAddress', senderAddress, `must belong to the SES identity ${sesIdentity}`);
  }
  if (input.configurationSetName !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(input.configurationSetName)) {
    throw new SettingsError(
      'configurationSetName',
      input.configurationSetName,
      'must be 1 to 64 letters, digits, _ or -',
    );
  }

  const retentionPeriodSeconds = input.retentionPeriodSeconds ?? DEFAULTS.retentionPeriodSeconds;
  checkInt(
    'retentionPeriodSeconds',
    retentionPeriodSeconds,
    60,
    14 * DAY,
    ' seconds (1 minute to 14 days, the SQS limits)',
  );

  const retryBudgetSeconds = input.retryBudgetSeconds ?? DEFAULTS.retryBudgetSeconds;
  checkInt('retryBudgetSeconds', retryBudgetSeconds, 1, 14 * DAY, ' seconds');

  const allowShortDedupeWindow = input.allowShortDedupeWindow ?? DEFAULTS.allowShortDedupeWindow;
  if (typeof allowShortDedupeWindow !== 'boolean') {
    throw new SettingsError('allowShortDedupeWindow', allowShortDedupeWindow, 'must be true or false');
  }
  // Every path a copy can take back: a retried message travels as delayed copies, each with a fresh
  // retention period, for up to the retry budget; the last of them can then be dead-lettered (a new
  // message there, kept 14 days) and redriven late.
  const everyPath = retentionPeriodSeconds + retryBudgetSeconds + DLQ_RETENTION_SECONDS;
  const dedupeWindowSeconds = input.dedupeWindowSeconds ?? everyPath + DEFAULTS.dedupeWindowMarginSeconds;
  checkInt('dedupeWindowSeconds', dedupeWindowSeconds, 1, 366 * DAY, ' seconds');
  if (dedupeWindowSeconds < everyPath && !allowShortDedupeWindow) {
    throw new SettingsError(
      'dedupeWindowSeconds',
      dedupeWindowSeconds,
      `must be at least the queue retention plus the retry budget plus the DLQ retention (${retentionPeriodSeconds} + ${retryBudgetSeconds} + ${DLQ_RETENTION_SECONDS} = ${everyPath}), so a copy retried late or redriven from the DLQ still meets its record; set allowShortDedupeWindow=true to accept a shorter window on purpose`,
    );
  }
  if (dedupeWindowSeconds < retentionPeriodSeconds + retryBudgetSeconds) {
    throw new SettingsError(
      'dedupeWindowSeconds',
      dedupeWindowSeconds,
      `must be at least the queue retention period plus the retry budget (retentionPeriodSeconds=${retentionPeriodSeconds} + retryBudgetSeconds=${retryBudgetSeconds}); a shorter window forgets keys while duplicates can still arrive`,
    );
  }

  const functionTimeoutSeconds = input.functionTimeoutSeconds ?? DEFAULTS.functionTimeoutSeconds;
  checkInt('functionTimeoutSeconds', functionTimeoutSeconds, 1, 900, ' seconds');
  const tuning = resolveTuning(input, functionTimeoutSeconds);

  const visibilityTimeoutSeconds = input.visibilityTimeoutSeconds ?? DEFAULTS.visibilityFactor * functionTimeoutSeconds;
  checkInt('visibilityTimeoutSeconds', visibilityTimeoutSeconds, 0, 12 * 60 * 60, ' seconds');
  if (visibilityTimeoutSeconds < DEFAULTS.visibilityFactor * functionTimeoutSeconds) {
    throw new SettingsError(
      'visibilityTimeoutSeconds',
      visibilityTimeoutSeconds,
      `must be at least ${DEFAULTS.visibilityFactor} x functionTimeoutSeconds (${DEFAULTS.visibilityFactor * functionTimeoutSeconds}), or a message reappears while it is still being sent`,
    );
  }

  const maxReceiveCount = input.maxReceiveCount ?? DEFAULTS.maxReceiveCount;
  checkInt('maxReceiveCount', maxReceiveCount, 1, 1000, '');
  if (maxReceiveCount < MIN_MAX_RECEIVE_COUNT) {
    throw new SettingsError(
      'maxReceiveCount',
      maxReceiveCount,
      `must be at least ${MIN_MAX_RECEIVE_COUNT}, so that throttling and in-progress retries do not dead-letter good messages`,
    );
  }
  checkRetentionHoldsRetryPath(retentionPeriodSeconds, visibilityTimeoutSeconds, maxReceiveCount);

  const memorySizeMb = input.memorySizeMb ?? DEFAULTS.memorySizeMb;
  checkInt('memorySizeMb', memorySizeMb, 128, 10240, ' MB');

  const maxBatchingWindowSeconds = input.maxBatchingWindowSeconds ?? DEFAULTS.maxBatchingWindowSeconds;
  checkInt('maxBatchingWindowSeconds', maxBatchingWindowSeconds, 0, 300, ' seconds');

  const batchSize = input.batchSize ?? DEFAULTS.batchSize;
  checkInt(
    'batchSize',
    batchSize,
    1,
    maxBatchingWindowSeconds > 0 ? 10000 : 10,
    maxBatchingWindowSeconds > 0 ? '' : ' (above 10 needs a batching window)',
  );

  const maxConcurrency = input.maxConcurrency ?? DEFAULTS.maxConcurrency;
  checkInt('maxConcurrency', maxConcurrency, 2, 1000, ' (the Lambda SQS event source limits)');

  const idempotencyKeyPrefix = input.idempotencyKeyPrefix ?? DEFAULTS.idempotencyKeyPrefix;
  if (typeof idempotencyKeyPrefix !== 'string' || !PREFIX.test(idempotencyKeyPrefix)) {
    throw new SettingsError(
      'idempotencyKeyPrefix',
      idempotencyKeyPrefix,
      'must be 1 to 64 letters, digits, ".", "_" or "-"',
    );
  }

  const failOpen = input.failOpen ?? DEFAULTS.failOpen;
  if (typeof failOpen !== 'boolean') {
    throw new SettingsError('failOpen', failOpen, 'must be true or false');
  }

  const logLevel = input.logLevel ?? DEFAULTS.logLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new SettingsError('logLevel', logLevel, `must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const metricsNamespace = input.metricsNamespace ?? DEFAULTS.metricsNamespace;
  if (typeof metricsNamespace !== 'string' || !NAMESPACE.test(metricsNamespace)) {
    throw new SettingsError('metricsNamespace', metricsNamespace, 'must be 1 to 255 letters, digits or . _ / # : -');
  }
  if (/^aws\//i.test(metricsNamespace)) {
    throw new SettingsError(
      'metricsNamespace',
      metricsNamespace,
      'must not start with "AWS/": reserved for AWS services',
    );
  }

  const logRetentionDays = input.logRetentionDays ?? DEFAULTS.logRetentionDays;
  if (!LOG_RETENTION_DAYS.includes(logRetentionDays)) {
    throw new SettingsError(
      'logRetentionDays',
      logRetentionDays,
      `must be a retention CloudWatch Logs accepts: ${LOG_RETENTION_DAYS.join(', ')}`,
    );
  }

  const sendConfirmationGraceSeconds = input.sendConfirmationGraceSeconds ?? DEFAULTS.sendConfirmationGraceSeconds;
  checkInt('sendConfirmationGraceSeconds', sendConfirmationGraceSeconds, 1, 12 * 60 * 60, ' seconds');
  if (sendConfirmationGraceSeconds >= retentionPeriodSeconds) {
    throw new SettingsError(
      'sendConfirmationGraceSeconds',
      sendConfirmationGraceSeconds,
      `must be shorter than the queue retention period (retentionPeriodSeconds=${retentionPeriodSeconds}), or a message waiting for its SES event expires from the queue`,
    );
  }
  const maxSendRate = input.maxSendRate ?? DEFAULTS.maxSendRate;
  checkInt('maxSendRate', maxSendRate, 1, 100_000, ' recipients per second');

  const retryingTooLongSeconds = input.retryingTooLongSeconds ?? DEFAULTS.retryingTooLongSeconds;
  checkInt('retryingTooLongSeconds', retryingTooLongSeconds, 1, 14 * DAY, ' seconds');

  return {
    senderAddress,
    ...(senderName !== undefined ? { senderName } : {}),
    sesIdentity,
    ...(input.configurationSetName !== undefined ? { configurationSetName: input.configurationSetName } : {}),
    retentionPeriodSeconds,
    dedupeWindowSeconds,
    allowShortDedupeWindow,
    functionTimeoutSeconds,
    memorySizeMb,
    visibilityTimeoutSeconds,
    batchSize,
    maxBatchingWindowSeconds,
    maxConcurrency,
    maxReceiveCount,
    idempotencyKeyPrefix,
    failOpen,
    logLevel,
    metricsNamespace,
    logRetentionDays,
    sendConfirmationGraceSeconds,
    retryBudgetSeconds,
    maxSendRate,
    retryingTooLongSeconds,
    ...tuning,
  };
}

/** The longest visibility timeout SQS allows (ChangeMessageVisibility), in seconds. */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/** The handler's timeout and backoff tuning, checked against the function timeout. */
function resolveTuning(
  input: PipelineSettings,
  functionTimeoutSeconds: number,
): Pick<ResolvedSettings, 'sesTimeoutMs' | 'retryBaseSeconds' | 'systemicRetrySeconds' | 'retryCapSeconds'> {
  const budgetMs = functionTimeoutSeconds * 1000;
  // The default leaves room in a short invocation too; a value given is checked as given.
  const sesTimeoutMs = input.sesTimeoutMs ?? Math.min(DEFAULTS.sesTimeoutMs, Math.floor(budgetMs / 2));
  if (!Number.isInteger(sesTimeoutMs) || sesTimeoutMs < 100 || sesTimeoutMs > budgetMs / 2) {
    throw new SettingsError(
      'sesTimeoutMs',
      sesTimeoutMs,
      `must be a whole number from 100 to half the function timeout (${budgetMs / 2} ms), so a slow send cannot use up the invocation`,
    );
  }
  const backoff = {
    retryBaseSeconds: input.retryBaseSeconds ?? DEFAULTS.retryBaseSeconds,
    systemicRetrySeconds: input.systemicRetrySeconds ?? DEFAULTS.systemicRetrySeconds,
    retryCapSeconds: input.retryCapSeconds ?? DEFAULTS.retryCapSeconds,
  };
  for (const [name, value] of Object.entries(backoff)) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_VISIBILITY_SECONDS) {
      throw new SettingsError(
        name,
        value,
        `must be a whole number from 1 to ${MAX_VISIBILITY_SECONDS} seconds (the SQS visibility limit)`,
      );
    }
  }
  return { sesTimeoutMs, ...backoff };
}

/**
 * The longest one copy of a message can stay in the work queue: a backoff delay of up to
 * {@link MAX_RETRY_DELAY_SECONDS}, then maxReceiveCount receives, each hidden for the
 * visibility timeout (an invocation that dies) or, when a copy cannot be re-enqueued, for a
 * backoff of up to the same cap.
 */
export function retryPathSeconds(visibilityTimeoutSeconds: number, maxReceiveCount: number): number {
  return MAX_RETRY_DELAY_SECONDS + maxReceiveCount * Math.max(visibilityTimeoutSeconds, MAX_RETRY_DELAY_SECONDS);
}

/** Synth-time invariant: the queue's retention holds a message through its whole retry path. */
function checkRetentionHoldsRetryPath(
  retentionPeriodSeconds: number,
  visibilityTimeoutSeconds: number,
  maxReceiveCount: number,
): void {
  const needed = retryPathSeconds(visibilityTimeoutSeconds, maxReceiveCount);
  if (retentionPeriodSeconds < needed) {
    throw new SettingsError(
      'retentionPeriodSeconds',
      retentionPeriodSeconds,
      `retention must hold the whole retry path: at least ${needed} seconds, a backoff delay of up to ${MAX_RETRY_DELAY_SECONDS} s plus maxReceiveCount=${maxReceiveCount} receives of visibilityTimeoutSeconds=${visibilityTimeoutSeconds} (or of a ${MAX_RETRY_DELAY_SECONDS} s backoff each); a shorter retention deletes messages while they wait to be retried`,
    );
  }
}

/**
 * Settings the CDK app reads from context besides {@link PipelineSettings}:
 * construct and monitoring options given as plain strings.
 */
export interface AppContextSettings {
  /**
   * Who may publish to the topic: 12-digit account ids and IAM ARNs (roles,
   * users). `-c` takes them comma-separated, cdk.json as a list.
   * @default the deploying account
   */
  readonly publisherPrincipals?: readonly string[];
  /**
   * Who, besides the redrive role the stack creates, may redrive: IAM role and
   * user ARNs (no accounts: an exemption names principals). `-c` takes them
   * comma-separated, cdk.json as a list.
   * @default none: only the redrive role
   */
  readonly redrivePrincipals?: readonly string[];
  /** SES templates the function may send with. @default all (`template/*`) */
  readonly sesTemplateNames?: readonly string[];
  /** An email address subscribed to the alarm topic. @default none */
  readonly alarmEmail?: string;
}

export type ContextSettings = PipelineSettings & AppContextSettings;

/** Context values are namespaced so they cannot clash with CDK feature flags. */
export const CONTEXT_PREFIX = 'emailPipeline:';

/**
 * What may follow `emailPipeline:` (cdk.json `context` or `-c key=value`), and
 * its kind: the declared settings with a context key. A key not listed here
 * fails the synth.
 */
const CONTEXT_SETTINGS = Object.entries(SETTINGS).filter(([, declaration]) => declaration.contextKey);

function coerce(key: string, kind: SettingKind, raw: unknown): string | number | boolean | string[] {
  // `-c key=value` always gives strings; cdk.json gives JSON types.
  if (kind === 'string') {
    if (typeof raw !== 'string') throw new SettingsError(key, raw, 'must be a string');
    return raw;
  }
  if (kind === 'list') {
    const items = typeof raw === 'string' ? raw.split(',').map((item) => item.trim()) : raw;
    if (!Array.isArray(items) || !items.every((item) => typeof item === 'string' && item !== '')) {
      throw new SettingsError(key, raw, 'must be a comma-separated string or a list of non-empty strings');
    }
    return items as string[];
  }
  if (kind === 'boolean') {
    if (raw === true || raw === 'true') return true;
    if (raw === false || raw === 'false') return false;
    throw new SettingsError(key, raw, 'must be true or false');
  }
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) throw new SettingsError(key, raw, 'must be a whole number');
  return n;
}

/** Refuses every `emailPipeline:` key that is not declared, naming the closest known one. */
function checkKnownKeys(context: Readonly<Record<string, unknown>>): void {
  const known = CONTEXT_SETTINGS.map(([name]) => name);
  for (const key of Object.keys(context)) {
    if (!key.startsWith(CONTEXT_PREFIX)) continue;
    const name = key.slice(CONTEXT_PREFIX.length);
    if (known.includes(name)) continue;
    const suggestion = closest(
      name.toLowerCase(),
      known.map((k) => k.toLowerCase()),
    );
    const match = known.find((k) => k.toLowerCase() === suggestion);
    throw new SettingsError(
      key,
      context[key],
      `is not a known setting${match ? `; did you mean ${CONTEXT_PREFIX}${match}?` : ''} (known: ${known.join(', ')})`,
    );
  }
}

/** A 12-digit account id, or an IAM role or user ARN. */
const PRINCIPAL = /^(?:\d{12}|arn:aws[a-z-]*:iam::\d{12}:(?:root|(?:role|user)\/[\w+=,.@/-]{1,512}))$/;

/**
 * An IAM role or user ARN (with a path or not): what `aws:PrincipalArn` holds for a principal named
 * in an exemption (a role's sessions carry the role's ARN).
 */
export const ROLE_OR_USER_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(?:role|user)\/[\w+=,.@/-]{1,512}$/;

/** The principal lists of the app's settings: what each entry must be, and the reason given when it is not. */
const PRINCIPAL_LISTS = [
  {
    name: 'publisherPrincipals',
    rule: PRINCIPAL,
    reason:
      'each must be a 12-digit account id or an IAM ARN (arn:aws:iam::123456789012:role/name, :user/name or :root)',
  },
  {
    name: 'redrivePrincipals',
    rule: ROLE_OR_USER_ARN,
    reason:
      'each must be an IAM role or user ARN (arn:aws:iam::123456789012:role/name or :user/name); accounts are not accepted',
  },
] as const;

function checkAppSettings(settings: AppContextSettings): void {
  for (const { name, rule, reason } of PRINCIPAL_LISTS) {
    for (const principal of settings[name] ?? []) {
      if (!rule.test(principal)) throw new SettingsError(`${CONTEXT_PREFIX}${name}`, principal, reason);
    }
  }
  if (settings.alarmEmail !== undefined) {
    const problem = configuredAddressProblem(settings.alarmEmail);
    if (problem !== undefined) throw new SettingsError(`${CONTEXT_PREFIX}alarmEmail`, settings.alarmEmail, problem);
  }
}

/**
 * Reads settings from CDK context (`emailPipeline:senderAddress` and so on):
 * the whole context, as `app.node.getAllContext()` or cdk.json's `context`
 * give it. Unknown `emailPipeline:` keys are refused.
 */
export function settingsFromContext(context: Readonly<Record<string, unknown>>): ContextSettings {
  checkKnownKeys(context);
  const out: Record<string, unknown> = {};
  for (const [key, { kind }] of CONTEXT_SETTINGS) {
    const raw = context[CONTEXT_PREFIX + key];
    if (raw === undefined || raw === null || raw === '') continue;
    out[key] = coerce(CONTEXT_PREFIX + key, kind, raw);
  }
  for (const required of ['senderAddress', 'sesIdentity'] as const) {
    if (out[required] === undefined) {
      throw new SettingsError(
        CONTEXT_PREFIX + required,
        undefined,
        `is required: set it in cdk.json "context" or pass -c ${CONTEXT_PREFIX}${required}=...`,
      );
    }
  }
  checkAppSettings(out as AppContextSettings);
  return out as unknown as ContextSettings;
}

/** Splits context settings into the pipeline's and the app's own. */
export function splitContextSettings(settings: ContextSettings): {
  readonly pipeline: PipelineSettings;
  readonly app: AppContextSettings;
} {
  const { publisherPrincipals, redrivePrincipals, sesTemplateNames, alarmEmail, ...pipeline } = settings;
  return {
    pipeline,
    app: {
      ...(publisherPrincipals !== undefined ? { publisherPrincipals } : {}),
      ...(redrivePrincipals !== undefined ? { redrivePrincipals } : {}),
      ...(sesTemplateNames !== undefined ? { sesTemplateNames } : {}),
      ...(alarmEmail !== undefined ? { alarmEmail } : {}),
    },
  };
}
