/**
 * Confirm before any resend. SES has no idempotency token, so a send whose answer was lost
 * (a timeout, reset or 5xx after the request went out; an invocation that died after SES
 * accepted) cannot be told apart from one SES never saw, except by SES's own events: every
 * send is tagged with its dedupe key, and the ledger function records the `Send` (and later)
 * events per key.
 *
 * Knowing that an earlier attempt's fate is unknown costs nothing on the normal path:
 * - when a send is ambiguous, Powertools deletes the claim on the error;
 *   {@link LedgerAwarePersistenceLayer} turns that delete into one UpdateItem that leaves an
 *   already-expired INPROGRESS claim carrying `sendAttemptAt` (the same one request);
 * - a claim that dies with its invocation stays INPROGRESS until its in-progress expiry.
 * Either way the next claim's conditional PutItem overwrites it; ReturnValues ALL_OLD (free on
 * that same request) hands back the old item, and an INPROGRESS one means: read the ledger
 * before calling SES.
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyRecordStatus, PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBPersistenceOptionsWithClientInstance } from '@aws-lambda-powertools/idempotency/types';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { LEDGER_ENV } from '../ledger/schema';
import { markDeadLettered, readLedgerItem } from '../ledger/store';
import { dedupeTagValue } from './email';
import { RetryableError, type PipelineError } from './errors';

/**
 * An unknown-fate send within the grace: retried without sending, at a time of its own rather
 * than the usual backoff, so that waiting for an SES event never uses up the receive budget:
 * once soon (at a tenth of the grace, when the event is usually in), then when the grace ends.
 */
export class AwaitingSendConfirmationError extends RetryableError {
  constructor(
    message: string,
    /** When to look again, in seconds. */
    readonly retryAfterSeconds: number,
  ) {
    super('AwaitingSendConfirmation', message);
  }
}

/** The retry delay a failure asks for itself (see {@link AwaitingSendConfirmationError}), if any. */
export function requestedRetrySeconds(failure: PipelineError): number | undefined {
  return failure instanceof AwaitingSendConfirmationError ? failure.retryAfterSeconds : undefined;
}

/** When to look again for the event of an attempt `waitedMs` ago, within a grace of `graceSeconds`. */
export function confirmationRetrySeconds(waitedMs: number, graceSeconds: number): number {
  const waited = waitedMs / 1000;
  const next = waited < graceSeconds / 10 ? graceSeconds / 10 : graceSeconds;
  return Math.max(1, Math.ceil(next - waited));
}

/** Default wait for an unknown-fate send's SES event before it is sent again (SES usually publishes within seconds). */
export const DEFAULT_SEND_CONFIRMATION_GRACE_SECONDS = 300;

/** The attribute an expired-on-purpose claim carries: when the lost attempt was made (epoch ms). */
export const SEND_ATTEMPT_AT = 'sendAttemptAt';

export const CONFIRM_METRIC = {
  /** An unknown-fate send that the ledger showed SES had accepted: completed without a send. */
  confirmedBySesEvent: 'ConfirmedBySesEvent',
  /** An unknown-fate send with no SES event after the grace: sent again (may be a duplicate). */
  unconfirmedResends: 'UnconfirmedResends',
  /** An unknown-fate send still within the grace: retried later without sending. */
  awaitingConfirmation: 'AwaitingSendConfirmation',
} as const;

export interface ConfirmSettings {
  /** The ledger table; none: confirmation is off (every retry sends, as before the ledger). */
  readonly ledgerTableName?: string;
  readonly graceSeconds: number;
  /** How long a dead-letter mark keeps the ledger item (the dedupe window). */
  readonly retentionSeconds: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads the confirmation settings; throws naming the variable at fault. */
export function readConfirmSettings(env: Env, retentionSeconds: number): ConfirmSettings {
  const raw = env[LEDGER_ENV.sendConfirmationGraceSeconds];
  let graceSeconds = DEFAULT_SEND_CONFIRMATION_GRACE_SECONDS;
  if (raw !== undefined && raw !== '') {
    graceSeconds = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(graceSeconds) || graceSeconds <= 0) {
      throw new Error(
        `Environment variable ${LEDGER_ENV.sendConfirmationGraceSeconds} must be a positive integer, got "${raw}"`,
      );
    }
  }
  const table = env[LEDGER_ENV.tableName];
  return { ...(table ? { ledgerTableName: table } : {}), graceSeconds, retentionSeconds };
}

interface Payload {
  readonly key?: unknown;
}

function requestKey(data: unknown): string | undefined {
  const key = (data as Payload | null)?.key;
  return typeof key === 'string' ? key : undefined;
}

/**
 * Powertools' DynamoDB persistence layer, plus what confirm-before-resend needs to know of a
 * claim, at no extra request: which claims overwrote an unknown-fate one, and (on request)
 * leaving a failed claim as an expired INPROGRESS record instead of deleting it.
 * Uses Powertools' default attribute names (as the construct's table does).
 */
export class LedgerAwarePersistenceLayer extends DynamoDBPersistenceLayer {
  /** Old items the last claims overwrote, by hashed record id (filled by the client middleware). */
  private readonly overwritten = new Map<string, Record<string, unknown>>();
  /** Request key -> when its lost attempt was made (epoch ms): this claim took over an unknown-fate one. */
  private readonly unknownFate = new Map<string, number>();
  /** Request key -> attempt time to leave on the claim when Powertools deletes it on the error. */
  private readonly marks = new Map<string, number>();
  private readonly dynamodb: DynamoDBClient;
  private readonly table: string;

  constructor(config: DynamoDBPersistenceOptionsWithClientInstance & { readonly awsSdkV3Client: DynamoDBClient }) {
    super(config);
    this.dynamodb = config.awsSdkV3Client;
    this.table = config.tableName;
    // The claim is Powertools' conditional PutItem: ask it for the item it replaced (free).
    this.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as {
          TableName?: string;
          Item?: Record<string, { S?: string }>;
          ReturnValues?: string;
        };
        const claim = context.commandName === 'PutItemCommand' && input.TableName === this.table;
        if (claim) input.ReturnValues = 'ALL_OLD';
        const result = await next(args);
        const old = (result.output as { Attributes?: Record<string, unknown> }).Attributes;
        const id = input.Item?.id?.S;
        if (claim && old && id) {
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          this.overwritten.set(id, unmarshall(old as any));
        }
        return result;
      },
      { step: 'initialize', name: 'claimReturnsOldItem' },
    );
  }

  override async saveInProgress(data: Parameters<DynamoDBPersistenceLayer['saveInProgress']>[0], ms?: number) {
    const key = requestKey(data);
    const id = this.getHashedIdempotencyKey(data);
    if (key !== undefined) {
      this.marks.delete(key);
      this.unknownFate.delete(key);
    }
    this.overwritten.delete(id);
    await super.saveInProgress(data, ms);
    const old = this.overwritten.get(id);
    this.overwritten.delete(id);
    const attemptAt = old ? lostAttemptAt(old) : undefined;
    if (key !== undefined && attemptAt !== undefined) this.unknownFate.set(key, attemptAt);
  }

  /** When the attempt this claim took over was made, if its fate is unknown (and forgets it). */
  takeUnknownFate(key: string): number | undefined {
    const at = this.unknownFate.get(key);
    this.unknownFate.delete(key);
    return at;
  }

  /** Powertools' delete on the error of this key's claim leaves an expired claim marked with `attemptAt` instead. */
  leaveUnknownFate(key: string, attemptAt: number): void {
    this.marks.set(key, attemptAt);
  }

  override async deleteRecord(data: Parameters<DynamoDBPersistenceLayer['deleteRecord']>[0]): Promise<void> {
    const key = requestKey(data);
    const attemptAt = key === undefined ? undefined : this.marks.get(key);
    if (key === undefined || attemptAt === undefined) return super.deleteRecord(data);
    this.marks.delete(key);
    const M = PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS;
    try {
      await this.dynamodb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.getKey(this.getHashedIdempotencyKey(data)),
          // Still ours (an INPROGRESS claim): expire it at once, so the next claim takes over and sees the mark.
          ConditionExpression: '#status = :inprogress',
          UpdateExpression: 'SET #inProgressExpiry = :expired, #attemptAt = :attemptAt',
          ExpressionAttributeNames: {
            '#status': M.statusAttr,
            '#inProgressExpiry': M.inProgressExpiryAttr,
            '#attemptAt': SEND_ATTEMPT_AT,
          },
          ExpressionAttributeValues: marshall({
            ':inprogress': IdempotencyRecordStatus.INPROGRESS,
            ':expired': 0,
            ':attemptAt': attemptAt,
          }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** The lost attempt's time of an overwritten claim, or undefined when it was not an unknown-fate one. */
export function lostAttemptAt(old: Record<string, unknown>): number | undefined {
  const M = PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS;
  if (old[M.statusAttr] !== IdempotencyRecordStatus.INPROGRESS) return undefined;
  if (typeof old[SEND_ATTEMPT_AT] === 'number') return old[SEND_ATTEMPT_AT];
  // A claim that died with its invocation: its attempt ended by the in-progress expiry at the latest.
  const expiry = old[M.inProgressExpiryAttr];
  return typeof expiry === 'number' ? expiry : 0;
}

/** What SES answered for an email, as the pipeline stores it. */
export interface ConfirmedSend {
  readonly sesMessageId: string;
  readonly sentAt: string;
}

export interface SendConfirmation {
  /**
   * Before a send: when this claim took over an unknown-fate attempt, consults the ledger.
   * Returns SES's answer when the ledger has the email (no send); undefined to send; throws a
   * retryable AwaitingSendConfirmation while the lost attempt is within the grace.
   */
  beforeSend(key: string): Promise<ConfirmedSend | undefined>;
  /** A send failed and may have been accepted: the claim stays marked for the next attempt. */
  afterFailedSend(key: string, failure: PipelineError): void;
  /** The record is being dead-lettered: the ledger item says so (failure path only). */
  deadLettered(key: string, failure: PipelineError): Promise<void>;
}

export interface ConfirmDeps {
  readonly settings: ConfirmSettings;
  readonly persistence: LedgerAwarePersistenceLayer;
  readonly dynamodb: Pick<DynamoDBClient, 'send'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now?: () => number;
}

export function createSendConfirmation(deps: ConfirmDeps): SendConfirmation {
  const { settings, persistence, dynamodb, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const table = settings.ledgerTableName;

  async function beforeSend(key: string): Promise<ConfirmedSend | undefined> {
    const attemptAt = persistence.takeUnknownFate(key);
    if (attemptAt === undefined || !table) return undefined;
    const ledgerKey = dedupeTagValue(key);
    let item: Awaited<ReturnType<typeof readLedgerItem>>;
    try {
      item = await readLedgerItem(dynamodb, table, ledgerKey, now());
    } catch (error) {
      persistence.leaveUnknownFate(key, attemptAt);
      throw new RetryableError(
        'LedgerUnavailable',
        `could not read the send ledger to confirm an earlier attempt: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const sent = item?.events?.find((event) => event.sesMessageId);
    if (item?.sesMessageId && sent) {
      metrics.addMetric(CONFIRM_METRIC.confirmedBySesEvent, MetricUnit.Count, 1);
      return { sesMessageId: item.sesMessageId, sentAt: sent.at };
    }
    const waitedMs = now() - attemptAt;
    if (waitedMs < settings.graceSeconds * 1000) {
      persistence.leaveUnknownFate(key, attemptAt);
      metrics.addMetric(CONFIRM_METRIC.awaitingConfirmation, MetricUnit.Count, 1);
      throw new AwaitingSendConfirmationError(
        `an earlier attempt ${Math.round(waitedMs / 1000)} s ago may have been accepted by SES; waiting up to ${settings.graceSeconds} s for its SES event before sending again`,
        confirmationRetrySeconds(waitedMs, settings.graceSeconds),
      );
    }
    metrics.addMetric(CONFIRM_METRIC.unconfirmedResends, MetricUnit.Count, 1);
    logger.warn('no SES event for an earlier attempt after the grace; sending again (may deliver twice)', {
      dedupeKey: key,
      ledgerKey,
      attemptAt: new Date(attemptAt).toISOString(),
      graceSeconds: settings.graceSeconds,
    });
    return undefined;
  }

  return {
    beforeSend,
    afterFailedSend: (key, failure) => {
      if (table && failure.failureClass === 'ambiguous') persistence.leaveUnknownFate(key, now());
    },
    deadLettered: async (key, failure) => {
      if (!table) return;
      try {
        await markDeadLettered(
          dynamodb,
          table,
          dedupeTagValue(key),
          { at: new Date(now()).toISOString(), code: failure.code, reason: failure.message.slice(0, 512) },
          settings.retentionSeconds,
        );
      } catch (error) {
        // The DLQ entry is what matters; the mark is for the status lookup.
        logger.warn('could not mark the ledger item dead-lettered', {
          dedupeKey: key,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    },
  };
}
