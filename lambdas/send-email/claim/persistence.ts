/**
 * The claim stage's persistence layer: Powertools' DynamoDB persistence layer, made
 * ledger-aware so that knowing an earlier attempt's fate is unknown costs nothing on the
 * normal path (the confirm stage, confirm.ts, decides what to do about it):
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
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomBytes } from 'node:crypto';
import { CLAIM_ATTRIBUTES, claimEvidence, claimRef } from '../../kernel/ledger/binding';
import { cancelMarkOf } from '../../kernel/ledger/cancel-mark';
import { ledgerKey } from '../../kernel/ledger/schema';

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

  /**
   * A cancelled key's record (kernel/ledger/cancel-mark.ts) stands for the key whatever a copy
   * holds: it carries no payload hash, and any content under a cancelled key is cancelled. Every
   * other record is validated as Powertools does (same key, other content: a permanent failure).
   */
  override processExistingRecord(
    storedDataRecord: Parameters<DynamoDBPersistenceLayer['processExistingRecord']>[0],
    processedData: Parameters<DynamoDBPersistenceLayer['processExistingRecord']>[1],
  ): ReturnType<DynamoDBPersistenceLayer['processExistingRecord']> {
    if (
      storedDataRecord.getStatus() === IdempotencyRecordStatus.COMPLETED &&
      cancelMarkOf(storedDataRecord.getResponse())
    )
      return storedDataRecord;
    return super.processExistingRecord(storedDataRecord, processedData);
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
