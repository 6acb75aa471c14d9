/**
 * `DELETE /deliveries/{key}[?team=NAME]`: cancel a key that has not been sent (a team's: `<team>#<key>`). One conditional PutItem in the
 * send function's idempotency table writes the key's cancel mark (kernel/ledger/cancel-mark.ts)
 * where the key has no live record, then the ledger records a `Cancelled` event (by whom, when).
 * Exactly one of a cancel and a send wins: a send claims the key with a conditional PutItem of
 * its own before it calls SES, so either the claim is there first (the cancel is refused: the key
 * is in progress or sent) or the mark is (the claim meets it and sends nothing, ever). Cancelling
 * twice is harmless: the second finds the mark and answers as the first.
 * Pure apart from the DynamoDB clients it is given.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { cancelDetail, cancelMarkOf, type CancelMark } from '../kernel/ledger/cancel-mark';
import { CLAIM_ATTRIBUTES, keyTeam } from '../kernel/ledger/binding';
import { ledgerKey, PIPELINE_EVENT, type DeliveryReport } from '../kernel/ledger/schema';
import { recordPipelineEvent } from '../runtime/ledger-store';
import { TEAM_NAME, teamKey } from '../kernel/teams';
import {
  idempotencyRecordId,
  InvalidKeyError,
  InvalidTeamError,
  keyProblem,
  lookupDelivery,
  lookupKey,
  type LookupDeps,
} from './lookup';

export interface CancelDeps extends LookupDeps {
  /** The low-level client the ledger's write takes (runtime/ledger-store.ts). */
  readonly dynamodb: Pick<DynamoDBClient, 'send'>;
  /** How long the mark keeps the key cancelled: the send function's dedupe window, which outlives every copy. */
  readonly dedupeWindowSeconds: number;
}

/**
 * What a cancel did: `cancelled` (now), `already-cancelled` (by an earlier cancel: harmless), or
 * `too-late`: the key is claimed, in progress or sent, and will not be cancelled (the report says which).
 */
export type CancelOutcome = 'cancelled' | 'already-cancelled' | 'too-late';

export interface CancelResult {
  readonly outcome: CancelOutcome;
  /** The key's report after the cancel: `cancelled`, or the status that made it too late. */
  readonly report: DeliveryReport;
}

/**
 * Cancels `asked` for `by` (who asked: an IAM ARN, or `local (...)`); `team`'s key, `<team>#<key>`,
 * when a team is named. Throws InvalidKeyError for a bad key, InvalidTeamError for a bad team name.
 */
export async function cancelDelivery(
  deps: CancelDeps,
  asked: string,
  by: string,
  team?: string,
): Promise<CancelResult> {
  const problem = keyProblem(asked);
  if (problem !== undefined) throw new InvalidKeyError(asked, problem);
  if (team !== undefined && !TEAM_NAME.test(team)) throw new InvalidTeamError(team);
  const bare = lookupKey(asked);
  // A team's key lives in its namespace, as the send function makes it (kernel/teams.ts).
  const key = team !== undefined ? teamKey(team, bare) : bare;
  const nowMs = (deps.now ?? Date.now)();
  const id = idempotencyRecordId(deps.keyPrefix, key);
  const mark: CancelMark = { cancelled: true, cancelledAt: new Date(nowMs).toISOString(), cancelledBy: by };
  let outcome: CancelOutcome = 'cancelled';
  try {
    await deps.db.send(
      new PutCommand({
        TableName: deps.idempotencyTableName,
        // Powertools' record shape (its default attribute names), COMPLETED with the mark as its result.
        Item: {
          id,
          status: 'COMPLETED',
          expiration: Math.floor(nowMs / 1000) + deps.dedupeWindowSeconds,
          data: mark,
          [CLAIM_ATTRIBUTES.ledgerKey]: ledgerKey(key),
        },
        // No live record: none, or one past its expiry (a claim's own condition treats it as none too).
        // An INPROGRESS record, even past its in-progress expiry, may have sent: never overwritten.
        ConditionExpression: 'attribute_not_exists(#id) OR #expiry < :now',
        ExpressionAttributeNames: { '#id': 'id', '#expiry': 'expiration' },
        ExpressionAttributeValues: { ':now': Math.floor(nowMs / 1000) },
      }),
    );
  } catch (error) {
    if ((error as Error | undefined)?.name !== 'ConditionalCheckFailedException') throw error;
    const { Item } = await deps.db.send(
      new GetCommand({ TableName: deps.idempotencyTableName, Key: { id }, ConsistentRead: true }),
    );
    outcome = cancelMarkOf((Item as { data?: unknown } | undefined)?.data) ? 'already-cancelled' : 'too-late';
  }
  if (outcome === 'cancelled') {
    // Best effort after the mark (which alone decides): the report falls back on the mark when this fails.
    await recordPipelineEvent(
      deps.dynamodb,
      deps.ledgerTableName,
      ledgerKey(key),
      { type: PIPELINE_EVENT.cancelled.type, at: mark.cancelledAt, detail: cancelDetail(mark) },
      { status: PIPELINE_EVENT.cancelled.status, over: [PIPELINE_EVENT.scheduled.status] },
      deps.dedupeWindowSeconds,
      keyTeam(team, key),
    ).catch(() => false);
  }
  return { outcome, report: await lookupDelivery(deps, bare, team) };
}
