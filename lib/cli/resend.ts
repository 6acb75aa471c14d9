/**
 * Sending a key again on purpose (`email-pipeline resend`), after the cause of its failure was
 * fixed: the key is released (its idempotency record deleted, on condition that no send holds
 * it: never while INPROGRESS, whose fate may still be unknown) and a `Resend` event with who,
 * when and why is appended to its ledger timeline (from which the status starts over, see
 * sinceLastResend in the kernel's ledger/events.ts). Then a dead letter of the key, if any, is
 * redriven; otherwise the publisher sends the same message again. The record id is the one the
 * status lookup reads (idempotencyRecordId in lambdas/status/lookup.ts: Powertools' hash of the key).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  LEDGER_INTERNAL,
  LEDGER_STATUS_INDEX,
  LEDGER_TABLE,
  ledgerKey,
  RESEND_EVENT_TYPE,
} from '../../lambdas/kernel/ledger/schema';
import { idempotencyRecordId } from '../../lambdas/status/lookup';

/** Longest reason kept (it goes into the timeline and every status report). */
export const MAX_REASON_LENGTH = 500;

/** How long a ledger item made by a resend alone is kept (the next SES event sets the usual expiry). */
const RESEND_ONLY_ITEM_SECONDS = 30 * 24 * 3600;

export interface ReleaseTarget {
  readonly db: Pick<DynamoDBDocumentClient, 'send'>;
  readonly idempotencyTableName: string;
  readonly ledgerTableName: string;
  readonly keyPrefix: string;
}

export interface Release {
  readonly key: string;
  /** Who asked (the caller's ARN on AWS, `local:<user>` locally). */
  readonly who: string;
  readonly reason: string;
  /** ISO 8601. */
  readonly at: string;
}

/** Why a key cannot be released now. */
export class NotReleasable extends Error {
  override readonly name = 'NotReleasable';
}

/** The timeline detail of a resend: who and why (recipient-free, as every detail). */
export function resendDetail(who: string, reason: string): string {
  return `by ${who}: ${reason}`;
}

/** What the key's claim was before the release: `none`, or its Powertools status (COMPLETED). */
export type Released = 'none' | 'completed';

/**
 * What a release of `key` would find (a consistent read, nothing changed): no claim, or a completed
 * one. Throws NotReleasable while a send holds the claim.
 */
export async function releasable(target: ReleaseTarget, key: string): Promise<Released> {
  const id = idempotencyRecordId(target.keyPrefix, key);
  const { Item } = await target.db.send(
    new GetCommand({ TableName: target.idempotencyTableName, Key: { id }, ConsistentRead: true }),
  );
  const status = (Item as { status?: string } | undefined)?.status;
  if (status !== undefined && status !== 'COMPLETED') {
    throw new NotReleasable(
      `a send of this key is in progress (or its fate is still being confirmed): its claim is ${status}. ` +
        'Wait until email-pipeline status shows it settled, then try again.',
    );
  }
  return status === 'COMPLETED' ? 'completed' : 'none';
}

/**
 * Releases the key and records the resend. Refuses (NotReleasable) while a send holds the claim;
 * the ledger event is written only once the claim is gone, so a refused release leaves no trace.
 */
export async function releaseKey(target: ReleaseTarget, release: Release): Promise<Released> {
  const id = idempotencyRecordId(target.keyPrefix, release.key);
  const status = await releasable(target, release.key);
  try {
    await target.db.send(
      new DeleteCommand({
        TableName: target.idempotencyTableName,
        Key: { id },
        ConditionExpression: 'attribute_not_exists(id) OR #status = :completed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':completed': 'COMPLETED' },
      }),
    );
  } catch (error) {
    if (
      error instanceof ConditionalCheckFailedException ||
      (error as Error).name === 'ConditionalCheckFailedException'
    ) {
      throw new NotReleasable(
        'a send of this key started meanwhile: nothing was released. Try again once it is settled.',
      );
    }
    throw error;
  }
  const atSeconds = Math.floor(Date.parse(release.at) / 1000);
  await target.db.send(
    new UpdateCommand({
      TableName: target.ledgerTableName,
      Key: { [LEDGER_TABLE.partitionKey]: ledgerKey(release.key) },
      // The status starts over: the next SES event of the new send appends (rank 0, time after the resend).
      UpdateExpression:
        'SET #events = list_append(if_not_exists(#events, :empty), :event), #lastAt = :at, #rank = :zero, ' +
        '#updatedAt = :at, #exp = if_not_exists(#exp, :exp) REMOVE #status, #shard, #bound ADD #version :one',
      ExpressionAttributeNames: {
        '#events': 'events',
        '#lastAt': LEDGER_INTERNAL.lastAt,
        '#rank': LEDGER_INTERNAL.rank,
        '#updatedAt': 'updatedAt',
        '#exp': LEDGER_TABLE.ttlAttribute,
        '#status': 'status',
        '#shard': LEDGER_STATUS_INDEX.partitionKey,
        '#version': LEDGER_INTERNAL.version,
        // A new send starts over: no later event is bound without its claim.
        '#bound': LEDGER_INTERNAL.boundAttempts,
      },
      ExpressionAttributeValues: {
        ':empty': [],
        ':event': [{ type: RESEND_EVENT_TYPE, at: release.at, detail: resendDetail(release.who, release.reason) }],
        ':at': release.at,
        ':zero': 0,
        ':exp': atSeconds + RESEND_ONLY_ITEM_SECONDS,
        ':one': 1,
      },
    }),
  );
  return status;
}
