/**
 * Resolution: applies the declaration's defaults (declaration.ts) to what was given and checks
 * every rule, the declared bounds and the synth-time invariants of the design that tie settings
 * together. The CDK construct and the local pipeline both resolve here, so they cannot drift.
 * Plain TypeScript with no aws-cdk-lib import.
 */
import { displayNameProblem } from '../../lambdas/kernel/contract/address';
import { SQS_MAX_DELAY_SECONDS, SQS_MAX_RETENTION_SECONDS } from '../../lambdas/kernel/sqs-limits';
import { SETTINGS, valueDefaults } from './declaration';
import { configuredAddressProblem, domainOf, LOG_RETENTION_DAYS, SettingsError } from './rules';
import { resolveCallbackStatuses, resolveCallbackUrl } from './callbacks';
import { resolveTeams } from './teams';
import { LOG_LEVELS, type PipelineSettings, type ResolvedSettings } from './types';

const DAY = 24 * 60 * 60;

/**
 * Defaults: every one-value default of the declaration (declaration.ts), and the factors the
 * derived ones are built from.
 */
export const DEFAULTS = {
  ...valueDefaults(),
  dedupeWindowMarginSeconds: DAY,
  visibilityFactor: 6,
} as const;

/**
 * The longest one copy of a message waits before its next attempt: SQS's largest DelaySeconds,
 * and the backoff cap of the send function.
 */
export const MAX_RETRY_DELAY_SECONDS = SQS_MAX_DELAY_SECONDS;

/** The DLQ keeps messages for the SQS maximum, so operators have time to look. */
export const DLQ_RETENTION_SECONDS = SQS_MAX_RETENTION_SECONDS;

/** Lower bound on maxReceiveCount, as AWS advises for Lambda event sources. */
export const MIN_MAX_RECEIVE_COUNT = 5;

function checkInt(name: string, value: number, min: number, max: number, unit = ''): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new SettingsError(name, value, `must be a whole number from ${min} to ${max}${unit}`);
  }
}

/** The settings the declaration gives bounds. */
type BoundedSetting = {
  [K in keyof typeof SETTINGS]: (typeof SETTINGS)[K] extends { readonly bounds: object } ? K : never;
}[keyof typeof SETTINGS];

/** An integer setting as given, or its declared default, checked against its declared bounds. */
function integer(input: PipelineSettings, name: BoundedSetting & keyof typeof DEFAULTS): number {
  return bounded(name, input[name] ?? DEFAULTS[name]);
}

/** Checks `value` against the bounds the declaration gives `name`; returns it. */
function bounded(name: BoundedSetting, value: number): number {
  const { min, max, unit } = SETTINGS[name].bounds;
  checkInt(name, value, min, max, unit);
  return value;
}

const DOMAIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const PREFIX = /^[A-Za-z0-9._-]{1,64}$/;
const NAMESPACE = /^[A-Za-z0-9._/#:-]{1,255}$/;

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

  const retentionPeriodSeconds = integer(input, 'retentionPeriodSeconds');

  const retryBudgetSeconds = integer(input, 'retryBudgetSeconds');

  const maxScheduleAheadSeconds = integer(input, 'maxScheduleAheadSeconds');

  const allowShortDedupeWindow = input.allowShortDedupeWindow ?? DEFAULTS.allowShortDedupeWindow;
  if (typeof allowShortDedupeWindow !== 'boolean') {
    throw new SettingsError('allowShortDedupeWindow', allowShortDedupeWindow, 'must be true or false');
  }
  // Every path a copy can take back: a retried message travels as delayed copies, each with a fresh
  // retention period, for up to the retry budget; the last of them can then be dead-lettered (a new
  // message there, kept 14 days) and redriven late. A scheduled message starts that path up to
  // maxScheduleAheadSeconds after it reached the queue (its retry budget starts at its sendAt).
  const everyPath = retentionPeriodSeconds + retryBudgetSeconds + DLQ_RETENTION_SECONDS + maxScheduleAheadSeconds;
  const dedupeWindowSeconds = input.dedupeWindowSeconds ?? everyPath + DEFAULTS.dedupeWindowMarginSeconds;
  bounded('dedupeWindowSeconds', dedupeWindowSeconds);
  if (dedupeWindowSeconds < everyPath && !allowShortDedupeWindow) {
    throw new SettingsError(
      'dedupeWindowSeconds',
      dedupeWindowSeconds,
      `must be at least the queue retention plus the retry budget plus the DLQ retention plus the schedule horizon (${retentionPeriodSeconds} + ${retryBudgetSeconds} + ${DLQ_RETENTION_SECONDS} + maxScheduleAheadSeconds=${maxScheduleAheadSeconds} = ${everyPath}), so a copy scheduled, retried late or redriven from the DLQ still meets its record; set allowShortDedupeWindow=true to accept a shorter window on purpose`,
    );
  }
  if (dedupeWindowSeconds < retentionPeriodSeconds + retryBudgetSeconds + maxScheduleAheadSeconds) {
    throw new SettingsError(
      'dedupeWindowSeconds',
      dedupeWindowSeconds,
      `must be at least the queue retention period plus the retry budget plus the schedule horizon (retentionPeriodSeconds=${retentionPeriodSeconds} + retryBudgetSeconds=${retryBudgetSeconds} + maxScheduleAheadSeconds=${maxScheduleAheadSeconds}); a shorter window forgets keys while duplicates can still arrive`,
    );
  }

  const functionTimeoutSeconds = integer(input, 'functionTimeoutSeconds');
  const tuning = resolveTuning(input, functionTimeoutSeconds);

  const visibilityTimeoutSeconds = input.visibilityTimeoutSeconds ?? DEFAULTS.visibilityFactor * functionTimeoutSeconds;
  bounded('visibilityTimeoutSeconds', visibilityTimeoutSeconds);
  if (visibilityTimeoutSeconds < DEFAULTS.visibilityFactor * functionTimeoutSeconds) {
    throw new SettingsError(
      'visibilityTimeoutSeconds',
      visibilityTimeoutSeconds,
      `must be at least ${DEFAULTS.visibilityFactor} x functionTimeoutSeconds (${DEFAULTS.visibilityFactor * functionTimeoutSeconds}), or a message reappears while it is still being sent`,
    );
  }

  const maxReceiveCount = integer(input, 'maxReceiveCount');
  if (maxReceiveCount < MIN_MAX_RECEIVE_COUNT) {
    throw new SettingsError(
      'maxReceiveCount',
      maxReceiveCount,
      `must be at least ${MIN_MAX_RECEIVE_COUNT}, so that throttling and in-progress retries do not dead-letter good messages`,
    );
  }
  checkRetentionHoldsRetryPath(retentionPeriodSeconds, visibilityTimeoutSeconds, maxReceiveCount);

  const memorySizeMb = integer(input, 'memorySizeMb');

  const maxBatchingWindowSeconds = integer(input, 'maxBatchingWindowSeconds');

  const batchSize = input.batchSize ?? DEFAULTS.batchSize;
  checkInt(
    'batchSize',
    batchSize,
    1,
    maxBatchingWindowSeconds > 0 ? 10000 : 10,
    maxBatchingWindowSeconds > 0 ? '' : ' (above 10 needs a batching window)',
  );

  const maxConcurrency = integer(input, 'maxConcurrency');
  const statusReservedConcurrency = integer(input, 'statusReservedConcurrency');

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

  const sendConfirmationGraceSeconds = integer(input, 'sendConfirmationGraceSeconds');
  if (sendConfirmationGraceSeconds >= retentionPeriodSeconds) {
    throw new SettingsError(
      'sendConfirmationGraceSeconds',
      sendConfirmationGraceSeconds,
      `must be shorter than the queue retention period (retentionPeriodSeconds=${retentionPeriodSeconds}), or a message waiting for its SES event expires from the queue`,
    );
  }
  const maxSendRate = integer(input, 'maxSendRate');
  const highPriorityRateShare = integer(input, 'highPriorityRateShare');

  const retryingTooLongSeconds = integer(input, 'retryingTooLongSeconds');
  const teams = resolveTeams(input.teams, sesIdentity);
  const callbackUrl = resolveCallbackUrl('callbackUrl', input.callbackUrl);
  const callbackStatuses = resolveCallbackStatuses(
    'callbackStatuses',
    input.callbackStatuses,
    callbackUrl,
    'callbackUrl',
  );

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
    statusReservedConcurrency,
    maxReceiveCount,
    idempotencyKeyPrefix,
    failOpen,
    logLevel,
    metricsNamespace,
    logRetentionDays,
    sendConfirmationGraceSeconds,
    retryBudgetSeconds,
    maxScheduleAheadSeconds,
    maxSendRate,
    highPriorityRateShare,
    retryingTooLongSeconds,
    ...tuning,
    callbackRetryBaseSeconds: integer(input, 'callbackRetryBaseSeconds'),
    callbackRetryWindowSeconds: integer(input, 'callbackRetryWindowSeconds'),
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
    ...(callbackStatuses !== undefined ? { callbackStatuses } : {}),
    ...(teams !== undefined ? { teams } : {}),
  };
}

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
    retryBaseSeconds: integer(input, 'retryBaseSeconds'),
    systemicRetrySeconds: integer(input, 'systemicRetrySeconds'),
    retryCapSeconds: integer(input, 'retryCapSeconds'),
  };
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
