/**
 * What the callbacks' parts share: the callback function's environment, its table's shape, the
 * attributes its queue messages carry, its metrics. The callback function (lambdas/callbacks/),
 * the construct (lib/construct/callbacks/), the local pipeline and the CLI (`email-pipeline
 * callbacks`) read them from here. No imports: every bundle can take it.
 *
 * A callback is one POST per status change of a key, signed per Standard Webhooks v1.0.0, to the
 * URL of the key's team (or the pipeline's, with no teams). Status changes reach the callbacks queue
 * from the delivery-status topic (raw delivery, a subscription per callback filtered on `team`).
 */

/** The callback function's environment variables. */
export const CALLBACK_ENV = {
  /** The callbacks table (CALLBACKS_TABLE): one item per callback message, its claim and its log. */
  tableName: 'CALLBACKS_TABLE_NAME',
  /** The callbacks queue: a retry is the same message made visible again later. */
  queueUrl: 'CALLBACKS_QUEUE_URL',
  /** Where a callback that will not be delivered goes, with its reason. */
  deadLetterQueueUrl: 'CALLBACKS_DLQ_URL',
  /** JSON {@link CallbackTargets}: the URL, secret and statuses of each team's callback. */
  targets: 'CALLBACK_TARGETS',
  /** Seconds before the first retry; each later one waits about twice as long (with jitter). */
  retryBaseSeconds: 'CALLBACK_RETRY_BASE_SECONDS',
  /** How long a callback is retried, from its first try, before it is dead-lettered. */
  retryWindowSeconds: 'CALLBACK_RETRY_WINDOW_SECONDS',
  /** How long one POST may take. */
  timeoutMs: 'CALLBACK_TIMEOUT_MS',
  /** `true` only locally: a URL may name a private, loopback or link-local address (and http). */
  allowPrivateAddresses: 'CALLBACK_ALLOW_PRIVATE_ADDRESSES',
  /**
   * The send function's: the targets with a callback (team names, `*`), comma-separated. With
   * {@link CALLBACK_ENV.queueUrl} it tells their callbacks of a key it dead-letters (a change the
   * ledger never sees: no SES event comes of it).
   */
  targetNames: 'CALLBACK_TARGET_NAMES',
} as const;

/** The target of the pipeline's own callback (no teams): its key in {@link CallbackTargets}. */
export const PIPELINE_TARGET = '*';

/** One callback's destination. Exactly one of `secretArn` (AWS) and `secret` (local only) is set. */
export interface CallbackTarget {
  readonly url: string;
  /** The Secrets Manager secret holding the signing key (see {@link CallbackSecretValue}). */
  readonly secretArn?: string;
  /** The signing secret itself, `whsec_<base64>`: the local pipeline only. */
  readonly secret?: string;
  /** The statuses it is told of. @default every change */
  readonly statuses?: readonly string[];
}

/** Team name (or {@link PIPELINE_TARGET}) -> its callback. */
export type CallbackTargets = Readonly<Record<string, CallbackTarget>>;

/**
 * The JSON a callback secret in Secrets Manager holds: `key` signs every request, and while a
 * rotation is under way `previousKey` signs it too (two signatures, space-separated, as Standard
 * Webhooks allows), so receivers can switch at their own pace. Each is base64 (of 24 bytes or
 * more); the receiver's secret is `whsec_` followed by it.
 */
export interface CallbackSecretValue {
  readonly key: string;
  readonly previousKey?: string;
}

/**
 * The callbacks table: partition `key` (the ledger key), sort `id` (the webhook-id). One item per
 * callback message: its body (the same on every try), its state and its tries. Expires after
 * {@link CALLBACK_RETENTION_SECONDS}. The `by-day` index (partition `day`, YYYY-MM-DD of `at`; sort
 * `at`) lists them by time for `callbacks replay --since`.
 */
export const CALLBACKS_TABLE = {
  partitionKey: 'key',
  sortKey: 'id',
  ttlAttribute: 'expiration',
  dayIndex: { indexName: 'by-day', partitionKey: 'day', sortKey: 'at' },
} as const;

/** How long a callback's item (and so its replay) is kept: 14 days, the DLQs' retention. */
export const CALLBACK_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/** Attribute names of a callback item (besides the table's keys). */
export const CALLBACK_ITEM = {
  team: 'team',
  status: 'status',
  /** The request body, JSON text, fixed by the first try. */
  body: 'body',
  /** ISO 8601 time of the status change (the event's time). */
  at: 'at',
  day: 'day',
  /** `delivered` once a 2xx answered; absent while retrying; `failed` when given up on. */
  state: 'state',
  deliveredAt: 'deliveredAt',
  /** Tries so far. */
  attempts: 'attempts',
  /** The last try's result: `HTTP 503`, `timeout`, `connection refused`... */
  lastResult: 'lastResult',
  /** Epoch ms until which a try is under way (a claim): a second copy waits. */
  leaseUntil: 'leaseUntil',
  /** String set of replay ids already delivered (a replay POSTs once per replay). */
  replays: 'replays',
} as const;

/** The item of a team's callback state: partition `key` = this prefix + the team (or `*`), sort `id` = `state`. */
export const CALLBACK_STATE_KEY_PREFIX = 'callback-state#';

/**
 * Message attributes on the callbacks queue. A status change comes from the topic with the
 * ledger's `status`, `idempotency-key` and `team`; a replay (`email-pipeline callbacks replay`)
 * carries {@link CALLBACK_ATTRIBUTE.replay} and a body {@link ReplayRequest}; a dead letter
 * carries {@link CALLBACK_ATTRIBUTE.failure}.
 */
export const CALLBACK_ATTRIBUTE = {
  replay: 'callback-replay',
  failure: 'callback-failure',
  /** ISO time the callback was first tried (kept on a dead letter). */
  firstTry: 'callback-first-try',
} as const;

/** The body of a replay message: the stored callback to POST again, with its id and body. */
export interface ReplayRequest {
  readonly replayOf: { readonly key: string; readonly id: string };
}

/** Metrics of the callback function (namespace and `service` dimension as the pipeline's). */
export const CALLBACK_METRIC = {
  delivered: 'CallbacksDelivered',
  /** A try that failed and will be retried. */
  retried: 'CallbackRetries',
  /** Dead-lettered: a 4xx other than 408/429/410, the retry window spent, or the callback disabled. */
  failed: 'CallbacksFailed',
  /** A 410 Gone answer disabled a team's callback. */
  disabled: 'CallbacksDisabled',
  /** Age of a callback when it was delivered, seconds. */
  deliveryAge: 'CallbackDeliveryAgeSeconds',
} as const;

/**
 * The callback function's sizing (the construct's, and its local consumer's): each record is one
 * POST of at most {@link CALLBACK_TIMEOUT_MS}, a batch's records in parallel.
 */
export const CALLBACK_FUNCTION = {
  memorySizeMb: 256,
  timeoutSeconds: 60,
  batchSize: 10,
  /** Receivers are the publishers' own servers: few at once, whatever the backlog. */
  maxConcurrency: 5,
} as const;

/** The longest one callback POST may take (Standard Webhooks asks 15 to 30 s). */
export const CALLBACK_TIMEOUT_MS = 15_000;

/** The callbacks queue: retries wait in it (made visible again later), so it keeps them 4 days. */
export const CALLBACKS_QUEUE = {
  retentionSeconds: 4 * 24 * 60 * 60,
  visibilityTimeoutSeconds: CALLBACK_FUNCTION.timeoutSeconds * 6,
  /** A backstop for invocations that die: the function dead-letters a callback itself, with its reason. */
  maxReceiveCount: 100,
} as const;

/**
 * The filter policy of the callbacks queue's one subscription to the delivery-status topic (SNS
 * takes one subscription per topic and queue): the changes of the teams with a callback, and of
 * keys without a team (`team` absent) when the pipeline has one. Statuses are not filtered here
 * (the function drops those a callback did not ask for): a policy of team × status could pass
 * SNS's limit of 150 combinations; this one has one per team, at most 51.
 */
export function callbackFilterPolicy(targets: readonly string[]): Record<string, unknown> {
  const teams = targets.filter((target) => target !== PIPELINE_TARGET);
  const own = targets.includes(PIPELINE_TARGET);
  if (teams.length === 0) return { team: [{ exists: false }] };
  if (!own) return { team: [...teams] };
  return { $or: [{ team: [{ exists: false }] }, { team: [...teams] }] };
}
