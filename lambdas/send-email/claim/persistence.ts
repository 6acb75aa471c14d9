/**
 * Confirm before any resend. SES has no idempotency token, so a send whose answer was lost
 * (a timeout, reset or 5xx after the request went out; an invocation that died after SES
 * accepted) cannot be told apart from one SES never saw, except by SES's own events: every
 * send is tagged with its dedupe key, and the ledger function records the `Send` (and later)
 * events per key. Only events bound to one of the key's own attempts count (binding.ts): each
 * claim is written with a random attempt id that its send carries as a tag, so an event
 * planted for the key (a copy of a real one, or one made up) cannot stop a send.
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
import { randomBytes } from 'node:crypto';
import { CLAIM_ATTRIBUTES, claimEvidence, claimRef } from '../../kernel/ledger/binding';
import { eventsOf, statusOfType } from '../../kernel/ledger/events';
import { ledgerKey } from '../../kernel/ledger/schema';
import type { ConfirmSettings } from '../../kernel/environment';
import { markDeadLettered, readLedgerItem } from '../../runtime/ledger-store';
import { CONFIRM_METRIC } from '../../kernel/names';
import { RetryableError, type PipelineError } from '../../kernel/errors';

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

/** The attribute an expired-on-purpose claim carries: when the lost attempt was made (epoch ms). */
export const SEND_ATTEMPT_AT = 'sendAttemptAt';

interface Payload {
  readonly key?: unknown;
}

function requestKey(data: unknown): string | undefined {
  const key = (data as Payload | null)?.key;
  return typeof key === 'string' ? key : undefined;
}

/** What a send carries to bind its SES events to it (binding.ts): its attempt id and its claim. */
export interface SendAttempt {
  readonly attemptId: string;
  readonly claimRef: string;
}

/** An earlier attempt whose fate is unknown, as the claim that took it over found it. */
export interface LostAttempt {
  /** When it was made (epoch ms). */
  readonly at: number;
  /** The attempt ids its sends were made with: only events carrying one of them confirm it. */
  readonly attemptIds: ReadonlySet<string>;
}

/** A new attempt id: 128 random bits, hex (an SES tag value). */
export function newAttemptId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Powertools' DynamoDB persistence layer, plus what confirm-before-resend needs of a claim at
 * no extra request on the normal path:
 * - each claim is written with a fresh attempt id (and its key's ledger key), which the send
 *   then carries as a tag: the pipeline keeps it to itself until that send;
 * - which claims overwrote an unknown-fate one, and the attempt ids of that one (carried over
 *   into the new claim: one UpdateItem, on that path only);
 * - on request, leaving a failed claim as an expired INPROGRESS record instead of deleting it.
 * Uses Powertools' default attribute names (as the construct's table does).
 */
export class LedgerAwarePersistenceLayer extends DynamoDBPersistenceLayer {
  /** Old items the last claims overwrote, by hashed record id (filled by the client middleware). */
  private readonly overwritten = new Map<string, Record<string, unknown>>();
  /** Hashed record id -> what the claim's PutItem adds to the record (read by the middleware). */
  private readonly claiming = new Map<string, { attemptId: string; ledgerKey: string }>();
  /** Request key -> the attempt of its current claim. */
  private readonly current = new Map<string, SendAttempt>();
  /** Request key -> the earlier attempts its current claim took over (carried into the record). */
  private readonly carried = new Map<string, ReadonlySet<string>>();
  /** Request key -> the lost attempt this claim took over, until {@link takeUnknownFate}. */
  private readonly unknownFate = new Map<string, LostAttempt>();
  /** Request key -> attempt time to leave on the claim when Powertools deletes it on the error. */
  private readonly marks = new Map<string, number>();
  private readonly dynamodb: DynamoDBClient;
  private readonly table: string;
  private readonly prefix: string;
  private readonly drawAttemptId: () => string;

  constructor(
    config: DynamoDBPersistenceOptionsWithClientInstance & {
      readonly awsSdkV3Client: DynamoDBClient;
      /** The records' key prefix (the function's `keyPrefix`), to name the claim in a send's tags. */
      readonly keyPrefix: string;
      /** @default 128 random bits */
      readonly attemptId?: () => string;
    },
  ) {
    super(config);
    this.dynamodb = config.awsSdkV3Client;
    this.table = config.tableName;
    this.prefix = config.keyPrefix;
    this.drawAttemptId = config.attemptId ?? newAttemptId;
    // The claim is Powertools' conditional PutItem: it records the attempt, and returns the item it replaced (free).
    this.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as {
          TableName?: string;
          Item?: Record<string, unknown>;
          ReturnValues?: string;
        };
        const claim = context.commandName === 'PutItemCommand' && input.TableName === this.table;
        const id = claim ? (input.Item?.id as { S?: string } | undefined)?.S : undefined;
        const attempt = id === undefined ? undefined : this.claiming.get(id);
        if (claim) input.ReturnValues = 'ALL_OLD';
        if (claim && input.Item && attempt) {
          input.Item = {
            ...input.Item,
            [CLAIM_ATTRIBUTES.attempts]: { SS: [attempt.attemptId] },
            [CLAIM_ATTRIBUTES.ledgerKey]: { S: attempt.ledgerKey },
          };
        }
        const result = await next(args);
        const old = (result.output as { Attributes?: Record<string, unknown> }).Attributes;
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
    if (key !== undefined) this.forget(key);
    this.overwritten.delete(id);
    const attemptId = this.drawAttemptId();
    if (key !== undefined) this.claiming.set(id, { attemptId, ledgerKey: ledgerKey(key) });
    try {
      await super.saveInProgress(data, ms);
    } finally {
      this.claiming.delete(id);
    }
    if (key === undefined) return;
    this.current.set(key, { attemptId, claimRef: claimRef(this.prefix, id) });
    const old = this.overwritten.get(id);
    this.overwritten.delete(id);
    const at = old ? lostAttemptAt(old) : undefined;
    if (old === undefined || at === undefined) return;
    const attemptIds = attemptsOf(old);
    this.unknownFate.set(key, { at, attemptIds });
    if (attemptIds.size === 0) return;
    this.carried.set(key, attemptIds);
    // Keep the lost attempts' ids in the record, so the ledger still binds their late events.
    // Best effort: should it fail, the failure mark (deleteRecord) writes them again.
    await this.addAttempts(id, attemptIds).catch(() => undefined);
  }

  /** The attempt the key's current claim was made with (its send carries it as tags). */
  attemptOf(key: string): SendAttempt | undefined {
    return this.current.get(key);
  }

  /** The attempt this claim took over, if its fate is unknown (and forgets it). */
  takeUnknownFate(key: string): LostAttempt | undefined {
    const lost = this.unknownFate.get(key);
    this.unknownFate.delete(key);
    return lost;
  }

  /** Powertools' delete on the error of this key's claim leaves an expired claim marked with `attemptAt` instead. */
  leaveUnknownFate(key: string, attemptAt: number): void {
    this.marks.set(key, attemptAt);
  }

  /** Forgets what this layer holds for a key (its record is done with). */
  forget(key: string): void {
    this.current.delete(key);
    this.carried.delete(key);
    this.unknownFate.delete(key);
    this.marks.delete(key);
  }

  private async addAttempts(id: string, attemptIds: ReadonlySet<string>): Promise<void> {
    const M = PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS;
    try {
      await this.dynamodb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.getKey(id),
          ConditionExpression: '#status = :inprogress',
          UpdateExpression: 'ADD #attempts :attempts',
          ExpressionAttributeNames: { '#status': M.statusAttr, '#attempts': CLAIM_ATTRIBUTES.attempts },
          ExpressionAttributeValues: marshall({
            ':inprogress': IdempotencyRecordStatus.INPROGRESS,
            ':attempts': new Set(attemptIds),
          }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  override async deleteRecord(data: Parameters<DynamoDBPersistenceLayer['deleteRecord']>[0]): Promise<void> {
    const key = requestKey(data);
    const attemptAt = key === undefined ? undefined : this.marks.get(key);
    if (key === undefined || attemptAt === undefined) return super.deleteRecord(data);
    this.marks.delete(key);
    const M = PERSISTENCE_ATTRIBUTE_KEY_MAPPINGS;
    const attempts = new Set([...(this.carried.get(key) ?? []), ...[this.current.get(key)?.attemptId ?? []].flat()]);
    try {
      await this.dynamodb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.getKey(this.getHashedIdempotencyKey(data)),
          // Still ours (an INPROGRESS claim): expire it at once, so the next claim takes over and sees the mark
          // and every attempt id whose fate is unknown.
          ConditionExpression: '#status = :inprogress',
          UpdateExpression:
            'SET #inProgressExpiry = :expired, #attemptAt = :attemptAt' +
            (attempts.size ? ' ADD #attempts :attempts' : ''),
          ExpressionAttributeNames: {
            '#status': M.statusAttr,
            '#inProgressExpiry': M.inProgressExpiryAttr,
            '#attemptAt': SEND_ATTEMPT_AT,
            ...(attempts.size ? { '#attempts': CLAIM_ATTRIBUTES.attempts } : {}),
          },
          ExpressionAttributeValues: marshall({
            ':inprogress': IdempotencyRecordStatus.INPROGRESS,
            ':expired': 0,
            ':attemptAt': attemptAt,
            ...(attempts.size ? { ':attempts': attempts } : {}),
          }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** The attempt ids a claim record lists. */
function attemptsOf(record: Record<string, unknown>): ReadonlySet<string> {
  return claimEvidence(record)?.attempts ?? new Set();
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
  /** The attempt SES accepted (binding.ts): events of another SES message id are not bound to it. */
  readonly attemptId?: string;
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
  /** What the send of this key's current claim carries to bind its SES events to it. */
  attemptOf(key: string): SendAttempt | undefined;
  /** The key's record is done with (sent, duplicate, dead-lettered or retried). */
  done(key: string): void;
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
    const lost = persistence.takeUnknownFate(key);
    if (lost === undefined || !table) return undefined;
    const attemptAt = lost.at;
    const itemKey = ledgerKey(key);
    let item: Awaited<ReturnType<typeof readLedgerItem>>;
    try {
      item = await readLedgerItem(dynamodb, table, itemKey, now());
    } catch (error) {
      persistence.leaveUnknownFate(key, attemptAt);
      throw new RetryableError(
        'LedgerUnavailable',
        `could not read the send ledger to confirm an earlier attempt: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    // Only an event of one of the lost attempts proves SES took it: any other could be planted.
    const bound = eventsOf(item).filter(
      (e) => e.attemptId !== undefined && lost.attemptIds.has(e.attemptId) && e.sesMessageId && statusOfType(e.type),
    );
    const sent = bound.find((e) => e.type === 'Send') ?? bound[0];
    if (sent?.sesMessageId && sent.attemptId) {
      metrics.addMetric(CONFIRM_METRIC.confirmedBySesEvent, MetricUnit.Count, 1);
      return { sesMessageId: sent.sesMessageId, sentAt: sent.at, attemptId: sent.attemptId };
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
      ledgerKey: itemKey,
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
          ledgerKey(key),
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
    attemptOf: (key) => persistence.attemptOf(key),
    done: (key) => persistence.forget(key),
  };
}
