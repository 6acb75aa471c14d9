/**
 * The settings' types: what a platform engineer writes (construct props, cdk.json context) and
 * what resolution gives back. Their defaults, bounds and descriptions live in declaration.ts;
 * the `@default` tags below are checked against it (test/unit/lib/settings/types.test.ts).
 */

/** Log levels understood by Powertools Logger. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
  /**
   * An existing SES configuration set to send with, instead of the one the stack creates (which
   * publishes the events the send ledger records). @default one owned by the stack
   */
  readonly configurationSetName?: string;
  /** How long SQS keeps an unprocessed message. @default 345600 (4 days, the SQS default) */
  readonly retentionPeriodSeconds?: number;
  /**
   * How long an idempotency record keeps a key claimed. Must cover every path a
   * copy can take back: the queue's retention, plus the retry budget (a retried
   * message travels as delayed copies for that long), plus the DLQ's 14 days (the
   * last copy can be dead-lettered and redriven late), plus {@link maxScheduleAheadSeconds}
   * (a scheduled message starts its retry path that much later). See {@link allowShortDedupeWindow}.
   * @default retention + retry budget + 14 days + schedule horizon + 1 day
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
  /** Lambda memory of the send function; attachment bytes held at once follow it. @default 512 */
  readonly memorySizeMb?: number;
  /**
   * Queue visibility timeout. Must be at least 6 x the function timeout.
   * @default 6 × function timeout
   */
  readonly visibilityTimeoutSeconds?: number;
  /** Records per Lambda invocation. @default 10 */
  readonly batchSize?: number;
  /** How long the event source waits to fill a batch. @default 1 */
  readonly maxBatchingWindowSeconds?: number;
  /** Most concurrent invocations the event source starts (2 to 1000). @default 10 */
  readonly maxConcurrency?: number;
  /**
   * Concurrency reserved for (and the most allowed to) the status function. 0 reserves
   * none: an account on Lambda's default quota of 10 concurrent executions must use 0, since
   * Lambda keeps 10 unreserved.
   * @default 5
   */
  readonly statusReservedConcurrency?: number;
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
   * How far after it reached the queue a message's `sendAt` may be. A scheduled message waits
   * in the work queue as delayed copies, one hop of at most 900 s (SQS's largest delay) after
   * another, so each day ahead costs 96 hops; 0 refuses every future `sendAt`. The dedupe
   * window must cover it too (a copy can arrive that much later).
   * @default 86400 (24 hours)
   */
  readonly maxScheduleAheadSeconds?: number;
  /**
   * Recipients per second this pipeline may use of the account's SES sending
   * rate (SES counts recipients, not requests). Every container paces to its
   * share, maxSendRate / maxConcurrency.
   * @default 14 (the rate of a new production SES account)
   */
  readonly maxSendRate?: number;
  /**
   * Percent of maxSendRate reserved for mail published with the message attribute
   * `priority: high` (its own queue and event source mapping). Bulk mail borrows the
   * reserve while no high-priority mail waits; high-priority mail also takes what bulk
   * leaves unused. 0 gives high-priority mail no reserve (it still skips the bulk queue).
   * @default 20
   */
  readonly highPriorityRateShare?: number;
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
  /**
   * The teams that send through this pipeline, by name (1 to 32 of `a-z`, `0-9`, `-`, starting
   * with a letter): each gets a topic of its own (and a high-priority topic when it may publish
   * high priority), its own key namespace and its own From addresses. A message's team is the
   * topic it came through, never anything a publisher writes. Without teams the pipeline is one
   * implicit team: its topics, keys and `senderAddress` as they always were.
   * @default none (one implicit team)
   */
  readonly teams?: Readonly<Record<string, TeamSettings>>;
  /**
   * Where each status change of a key without a team is POSTed (a team names its own
   * `callbackUrl`), signed per Standard Webhooks v1.0.0 with a secret the stack keeps in Secrets
   * Manager, retried with backoff for `callbackRetryWindowSeconds`. `https://` on AWS; locally
   * `http://127.0.0.1:<port>/…` too. @default none (no callbacks)
   */
  readonly callbackUrl?: string;
  /** The statuses `callbackUrl` is told of. @default every change */
  readonly callbackStatuses?: readonly string[];
  /** Seconds before a failed callback's first retry; later waits about double, with jitter. @default 30 */
  readonly callbackRetryBaseSeconds?: number;
  /** How long a callback is retried from its first try, seconds; then the callbacks DLQ. @default 86400 (24 h) */
  readonly callbackRetryWindowSeconds?: number;
}

/** One team of {@link PipelineSettings.teams}. */
export interface TeamSettings {
  /**
   * The addresses the team may send from (bare ASCII, of the SES identity); the first is its
   * default From address. At least one.
   */
  readonly senders: readonly string[];
  /**
   * Who may publish to the team's topic: 12-digit account ids and IAM role/user ARNs.
   * @default none (nobody publishes until one is listed)
   */
  readonly publishers?: readonly string[];
  /**
   * Whether the team gets a high-priority topic (feeding the high-priority queue), open to its
   * `publishers`. @default false
   */
  readonly highPriority?: boolean;
  /**
   * Percent (1 to 100) of the send rate the team is promised; all teams' shares sum to at most 100.
   * The team's sends lease their slots from a lane of the shared rate lease of their own at this
   * rate (with `highPriority`, `highPriorityRateShare` percent of it is the team's high-priority
   * reserve, a lane its bulk mail holds while it is idle), and borrow the lanes other teams leave
   * idle, so whenever the team has mail waiting it gets at least its share. Its
   * queue runs this part of `maxConcurrency` (at least 2). Mail through the pipeline's own topic
   * gets what the shares leave, and idle slots. @default none: an equal part of what the other teams' shares leave
   */
  readonly rateSharePercent?: number;
  /**
   * An SES tenant for the team (`AWS::SES::Tenant`, SES's standard reputation policy), named on its
   * sends: its reputation, and a pause, are its own. Stored templates it sends must be listed in
   * `sesTemplateNames` (they are associated with the tenant). @default false
   */
  readonly sesTenant?: boolean;
  /**
   * IAM role/user ARNs that may read the team's statuses: the team's own status URL (`Teams` in the
   * `Endpoints` output), which answers for its keys only. @default none
   */
  readonly statusReaders?: readonly string[];
  /**
   * IAM role/user ARNs that may cancel (and read) the team's keys: the team's own cancel URL, which
   * cancels its keys only. @default none
   */
  readonly cancelers?: readonly string[];
  /** Where each status change of the team's keys is POSTed (see `callbackUrl`). @default none */
  readonly callbackUrl?: string;
  /** The statuses the team's callback is told of. @default every change */
  readonly callbackStatuses?: readonly string[];
}

/** A team with every default applied (see {@link TeamSettings}). */
export interface ResolvedTeam {
  readonly senders: readonly string[];
  readonly publishers: readonly string[];
  readonly highPriority: boolean;
  readonly rateSharePercent?: number;
  readonly sesTenant: boolean;
  readonly statusReaders: readonly string[];
  readonly cancelers: readonly string[];
  readonly callbackUrl?: string;
  readonly callbackStatuses?: readonly string[];
}

/** {@link PipelineSettings} with every default applied; `teams` only when some are configured. */
export type ResolvedSettings = Required<
  Omit<PipelineSettings, 'configurationSetName' | 'senderName' | 'teams' | 'callbackUrl' | 'callbackStatuses'>
> &
  Pick<PipelineSettings, 'configurationSetName' | 'senderName' | 'callbackUrl' | 'callbackStatuses'> & {
    readonly teams?: Readonly<Record<string, ResolvedTeam>>;
  };

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
   * Who, besides the redrive role the stack creates, may redrive, and who alone
   * may assume that role: IAM role and user ARNs (no accounts: an exemption
   * names principals). `-c` takes them comma-separated, cdk.json as a list.
   * @default none (the stack's redrive role only, which nobody may then assume)
   */
  readonly redrivePrincipals?: readonly string[];
  /**
   * Who may cancel keys not yet sent through the status URL: IAM role and
   * user ARNs. `-c` takes them comma-separated, cdk.json as a list.
   * @default none (nobody can cancel on AWS)
   */
  readonly cancelPrincipals?: readonly string[];
  /** SES templates the function may send with. @default all (`template/*`) */
  readonly sesTemplateNames?: readonly string[];
  /** An email address subscribed to the alarm topic. @default none */
  readonly alarmEmail?: string;
}

export type ContextSettings = PipelineSettings & AppContextSettings;
