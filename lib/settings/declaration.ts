/**
 * The one declaration of every setting: its kind, default, bounds, description, context key and
 * (for settings a function reads) environment variable. Resolution (resolve.ts) takes defaults
 * and bounds from it, context parsing (context.ts) its kinds, the functions' environment
 * (lib/construct/handler-env.ts) its variables, and the README's settings table
 * (`npm run docs:settings`) its descriptions.
 *
 * Plain data with no aws-cdk-lib import: the local pipeline loads it. The functions do not: they
 * read the variables' names from the kernel (lambdas/kernel/environment.ts), so their bundles
 * stay small.
 */
import { ENV, LEDGER_ENV } from '../../lambdas/kernel/environment';
import { SQS_MAX_RETENTION_SECONDS, SQS_MAX_VISIBILITY_SECONDS } from '../../lambdas/kernel/sqs-limits';
import type { ContextSettings } from './types';

const DAY = 24 * 60 * 60;

/** How a context value is read: `-c` gives strings (an object as JSON text), cdk.json JSON types. */
export type SettingKind = 'string' | 'integer' | 'boolean' | 'list' | 'object';

/** A default that is not one value: derived from other settings, or none. */
export interface DescribedDefault {
  readonly described: string;
}

export interface SettingDeclaration {
  readonly kind: SettingKind;
  /** The default value, or how the default is derived (or that there is none). */
  readonly default: string | number | boolean | DescribedDefault;
  /** What a number default means, shown beside it (`4 days`). */
  readonly defaultNote?: string;
  /** What the setting does and the rule it must keep (the README's notes). */
  readonly notes: string;
  /** Read from context as `emailPipeline:<name>`. */
  readonly contextKey: boolean;
  /** The environment variable the handler reads it from, if it does. */
  readonly env?: string;
  /** An integer's least and greatest value, and what its rule adds after them (units, why). */
  readonly bounds?: { readonly min: number; readonly max: number; readonly unit: string };
}

/** The backoff settings' bounds: a delay SQS can hold a message back by (ChangeMessageVisibility). */
const BACKOFF_BOUNDS = {
  min: 1,
  max: SQS_MAX_VISIBILITY_SECONDS,
  unit: ' seconds (the SQS visibility limit)',
} as const;

const REQUIRED: DescribedDefault = { described: '— (required)' };
const NONE: DescribedDefault = { described: 'none' };

/**
 * Every setting, in the README's order. The type makes it hold exactly the keys of
 * {@link ContextSettings} (PipelineSettings plus the app's context options).
 */
export const SETTINGS = {
  senderAddress: {
    kind: 'string',
    default: REQUIRED,
    notes: "the From address, bare ASCII (the contract's rules, no `*`/`?`); must belong to `sesIdentity`",
    contextKey: true,
    env: ENV.senderAddress,
  },
  senderName: {
    kind: 'string',
    default: NONE,
    notes: 'display name of the From address (encoded for SES)',
    contextKey: true,
    env: ENV.senderName,
  },
  sesIdentity: {
    kind: 'string',
    default: REQUIRED,
    notes: 'verified domain or address, lower-cased; IAM is scoped to it',
    contextKey: true,
  },
  configurationSetName: {
    kind: 'string',
    default: { described: 'one owned by the stack' },
    notes: 'an existing SES configuration set to use instead (see below)',
    contextKey: true,
    env: ENV.configurationSetName,
  },
  retentionPeriodSeconds: {
    kind: 'integer',
    default: 4 * 24 * 60 * 60,
    defaultNote: '4 days',
    notes:
      "queue retention; must hold one copy's retry path: 900 s + `maxReceiveCount` × max(visibility timeout, 900 s) (synth fails otherwise)",
    contextKey: true,
    bounds: { min: 60, max: SQS_MAX_RETENTION_SECONDS, unit: ' seconds (1 minute to 14 days, the SQS limits)' },
  },
  dedupeWindowSeconds: {
    kind: 'integer',
    default: { described: 'retention + retry budget + 14 days + schedule horizon + 1 day' },
    notes: 'must be ≥ retention + retry budget + DLQ retention (14 days) + `maxScheduleAheadSeconds`',
    contextKey: true,
    env: ENV.dedupeWindowSeconds,
    bounds: { min: 1, max: 366 * DAY, unit: ' seconds' },
  },
  allowShortDedupeWindow: {
    kind: 'boolean',
    default: false,
    notes: '`true` accepts a window ≥ retention + retry budget only (see below)',
    contextKey: true,
  },
  retryBudgetSeconds: {
    kind: 'integer',
    default: 24 * 60 * 60,
    defaultNote: '24 h',
    notes: 'how long a retryable, systemic or ambiguous failure is retried; then the DLQ with `RetryBudgetExhausted`',
    contextKey: true,
    env: ENV.retryBudgetSeconds,
    bounds: { min: 1, max: 14 * DAY, unit: ' seconds' },
  },
  maxScheduleAheadSeconds: {
    kind: 'integer',
    default: 24 * 60 * 60,
    defaultNote: '24 h',
    notes:
      'how far ahead a `sendAt` may be (from when the message reached the queue); it waits as 900 s delayed-copy hops, 96 a day; 0 refuses scheduling',
    contextKey: true,
    env: ENV.maxScheduleAheadSeconds,
    bounds: { min: 0, max: 7 * DAY, unit: ' seconds (at most 7 days: beyond, hops cost more than a scheduler)' },
  },
  maxSendRate: {
    kind: 'integer',
    default: 14,
    notes:
      "recipients per second this pipeline may use of the account's SES rate; all containers together pace to 95 % of it through a shared lease (the static share `maxSendRate / maxConcurrency` when DynamoDB cannot be reached)",
    contextKey: true,
    env: ENV.maxSendRate,
    bounds: { min: 1, max: 100_000, unit: ' recipients per second' },
  },
  highPriorityRateShare: {
    kind: 'integer',
    default: 20,
    defaultNote: '%',
    notes:
      "percent of `maxSendRate` reserved for high-priority mail (with teams: of each `highPriority` team's share, and of what the shares leave); bulk mail borrows it a second after the last high-priority mail's lease, a team's bulk mail before any other's",
    contextKey: true,
    env: ENV.highPriorityRateShare,
    bounds: { min: 0, max: 50, unit: ' percent' },
  },
  retryingTooLongSeconds: {
    kind: 'integer',
    default: 15 * 60,
    defaultNote: '15 min',
    notes: 'the `retryingTooLong` alarm fires when a retried message is older than this',
    contextKey: true,
    bounds: { min: 1, max: 14 * DAY, unit: ' seconds' },
  },
  functionTimeoutSeconds: {
    kind: 'integer',
    default: 30,
    notes: '',
    contextKey: true,
    bounds: { min: 1, max: 900, unit: ' seconds' },
  },
  memorySizeMb: {
    kind: 'integer',
    default: 512,
    notes:
      'arm64; the send function holds attachment bytes in a budget chosen from it: at 512 MB, ten emails of 25 MiB of files peak at about 370 MiB (BENCHMARKS.md, Attachment memory); at 256 MB one such email alone peaks near 175 MiB',
    contextKey: true,
    bounds: { min: 128, max: 10240, unit: ' MB' },
  },
  visibilityTimeoutSeconds: {
    kind: 'integer',
    default: { described: '6 × function timeout' },
    notes: 'must be ≥ 6 × function timeout',
    contextKey: true,
    bounds: { min: 0, max: SQS_MAX_VISIBILITY_SECONDS, unit: ' seconds' },
  },
  batchSize: { kind: 'integer', default: 10, notes: '', contextKey: true },
  maxBatchingWindowSeconds: {
    kind: 'integer',
    default: 1,
    notes: '',
    contextKey: true,
    bounds: { min: 0, max: 300, unit: ' seconds' },
  },
  maxConcurrency: {
    kind: 'integer',
    default: 10,
    notes: '2–1000',
    contextKey: true,
    env: ENV.maxConcurrency,
    bounds: { min: 2, max: 1000, unit: ' (the Lambda SQS event source limits)' },
  },
  statusReservedConcurrency: {
    kind: 'integer',
    default: 5,
    notes:
      "concurrency reserved for (and the most allowed to) the status function, so a flood of status requests cannot take the send and ledger functions' concurrency; 0 reserves none (a new account whose quota is 10 needs 0: Lambda keeps 10 unreserved)",
    contextKey: true,
    bounds: { min: 0, max: 1000, unit: ' (0: none reserved)' },
  },
  maxReceiveCount: {
    kind: 'integer',
    default: 5,
    notes: 'must be ≥ 5',
    contextKey: true,
    env: ENV.maxReceiveCount,
    bounds: { min: 1, max: 1000, unit: '' },
  },
  idempotencyKeyPrefix: {
    kind: 'string',
    default: 'email-pipeline',
    notes: 'keep it stable across deployments',
    contextKey: true,
    env: ENV.keyPrefix,
  },
  failOpen: {
    kind: 'boolean',
    default: false,
    notes: 'send without the dedupe check when DynamoDB is down (counted)',
    contextKey: true,
    env: ENV.failOpen,
  },
  logLevel: {
    kind: 'string',
    default: 'INFO',
    notes: '`DEBUG`, `INFO`, `WARN`, `ERROR`',
    contextKey: true,
    env: 'POWERTOOLS_LOG_LEVEL',
  },
  metricsNamespace: {
    kind: 'string',
    default: 'EmailPipeline',
    notes: '`AWS/…` is reserved and refused',
    contextKey: true,
    env: 'POWERTOOLS_METRICS_NAMESPACE',
  },
  logRetentionDays: {
    kind: 'integer',
    default: 30,
    notes: 'one CloudWatch Logs accepts: 1, 3, 5, 7, 14, 30, 60, 90, 120, ..., 3653 (the local pipeline checks it too)',
    contextKey: true,
  },
  sendConfirmationGraceSeconds: {
    kind: 'integer',
    default: 300,
    notes: 'how long an unknown-fate send waits for its SES event; < retention',
    contextKey: true,
    env: LEDGER_ENV.sendConfirmationGraceSeconds,
    bounds: { min: 1, max: SQS_MAX_VISIBILITY_SECONDS, unit: ' seconds' },
  },
  sesTimeoutMs: {
    kind: 'integer',
    default: 5000,
    notes: 'timeout of one SES SendEmail call, in ms; 100 to half the function timeout (the default too)',
    contextKey: true,
    env: ENV.sesTimeoutMs,
  },
  retryBaseSeconds: {
    kind: 'integer',
    default: 2,
    notes: 'first backoff of a retryable or ambiguous failure; doubles per receive, with jitter',
    contextKey: true,
    env: ENV.retryBaseSeconds,
    bounds: BACKOFF_BOUNDS,
  },
  systemicRetrySeconds: {
    kind: 'integer',
    default: 300,
    notes: 'first backoff of a systemic failure (account paused, daily quota)',
    contextKey: true,
    env: ENV.systemicRetrySeconds,
    bounds: BACKOFF_BOUNDS,
  },
  retryCapSeconds: {
    kind: 'integer',
    default: 300,
    notes: 'longest backoff of a retryable or ambiguous failure: the doubling stops here',
    contextKey: true,
    env: ENV.retryCapSeconds,
    bounds: BACKOFF_BOUNDS,
  },
  alarmEmail: {
    kind: 'string',
    default: NONE,
    notes: 'subscribed to the alarm topic; a bare address',
    contextKey: true,
  },
  publisherPrincipals: {
    kind: 'list',
    default: { described: 'the deploying account' },
    notes: 'account ids and IAM role/user ARNs; `-c` comma-separated',
    contextKey: true,
  },
  redrivePrincipals: {
    kind: 'list',
    default: { described: "none (the stack's redrive role only, which nobody may then assume)" },
    notes:
      'IAM role/user ARNs that may redrive (the queue policies exempt them by ARN) and assume the redrive role; `-c` comma-separated',
    contextKey: true,
  },
  cancelPrincipals: {
    kind: 'list',
    default: { described: 'none (nobody can cancel on AWS)' },
    notes: 'IAM role/user ARNs that may cancel keys through the status URL (DELETE); `-c` comma-separated',
    contextKey: true,
  },
  teams: {
    kind: 'object',
    default: { described: 'none (one implicit team)' },
    notes:
      'team name → `{ senders, publishers, highPriority, rateSharePercent, sesTenant, statusReaders, cancelers, callbackUrl, callbackStatuses }`; `-c` as JSON (see Teams below)',
    contextKey: true,
  },
  callbackUrl: {
    kind: 'string',
    default: NONE,
    notes:
      'where every status change of a key without a team is POSTed, signed per Standard Webhooks (a team names its own: `teams.<name>.callbackUrl`); `https://` on AWS, and `http://127.0.0.1` also locally',
    contextKey: true,
  },
  callbackStatuses: {
    kind: 'list',
    default: { described: 'every change' },
    notes: 'the statuses `callbackUrl` is told of (`delivered`, `bounced`, …); `-c` comma-separated',
    contextKey: true,
  },
  callbackRetryBaseSeconds: {
    kind: 'integer',
    default: 30,
    notes: 'wait before a failed callback is tried again; each later wait is about twice as long, with jitter',
    contextKey: true,
    bounds: { min: 1, max: 3600, unit: ' seconds' },
  },
  callbackRetryWindowSeconds: {
    kind: 'integer',
    default: DAY,
    defaultNote: '24 h',
    notes: 'how long a callback is retried from its first try; then the callbacks DLQ',
    contextKey: true,
    bounds: { min: 60, max: 3 * DAY, unit: ' seconds (the callbacks queue keeps a message 4 days)' },
  },
  sesTemplateNames: {
    kind: 'list',
    default: { described: 'all (`template/*`)' },
    notes: 'templates the function may send with; `-c` comma-separated',
    contextKey: true,
  },
} as const satisfies Readonly<Record<keyof ContextSettings, SettingDeclaration>>;

export type SettingName = keyof typeof SETTINGS;

/** The settings whose default is one value, with that value's type. */
export type ValueDefaults = {
  readonly [
    K in SettingName as (typeof SETTINGS)[K]['default'] extends DescribedDefault ? never : K
  ]: (typeof SETTINGS)[K]['default'];
};

/** Every default that is one value, from the declaration. */
export function valueDefaults(): ValueDefaults {
  const out: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(SETTINGS) as [string, SettingDeclaration][]) {
    if (typeof declaration.default !== 'object') out[name] = declaration.default;
  }
  return out as ValueDefaults;
}

/** The default as the README shows it: numbers plain, strings and booleans as code, described ones as written. */
export function defaultText(declaration: SettingDeclaration): string {
  const value = declaration.default;
  if (typeof value === 'object') return value.described;
  const shown = typeof value === 'number' ? String(value) : `\`${String(value)}\``;
  return declaration.defaultNote !== undefined ? `${shown} (${declaration.defaultNote})` : shown;
}

/** The README's settings table (markdown, columns padded as prettier pads them). */
export function settingsTable(): string {
  const rows = [
    ['setting', 'default', 'notes'],
    ...(Object.entries(SETTINGS) as [string, SettingDeclaration][]).map(([name, declaration]) => [
      `\`${name}\``,
      defaultText(declaration),
      declaration.notes,
    ]),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(3, ...rows.map((row) => [...row[column]!].length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}
