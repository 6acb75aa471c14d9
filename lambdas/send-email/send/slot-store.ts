/**
 * The shared rate lease's store: a lane's item on the idempotency table (id `rate#<key prefix>#<lane>`,
 * the lane `high`, `normal` or `team:<name>`; its `next` the time, epoch ms, of the lane's next free
 * slot, its `owner` the end of the last lease its own sends made (or its sibling's holding borrow:
 * lane-rates.ts `siblingOf`), `holder` the lane that wrote `owner`; TTL on `expiration`) and the three
 * conditional UpdateItem writes a lease makes on it (rate-lease.ts says when): advance `next` while
 * it lies within bounds, restart a stale or missing one, and repair an implausible one, conditioned
 * on the very value read. A borrow (another lane's sends) writes only while the owner has leased
 * nothing for a while, and leaves `owner` as it is; a holding borrow (the sibling's) writes also
 * while it holds the item itself, and records itself as `holder`. A failed condition answers what
 * the item held, not an error.
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LaneId } from './lane-rates';

/**
 * What one conditional write answered: the new `next`, or what it found. `next` is the value found
 * when it is a number (undefined: none, or not a number); `found` is the stored value as it is,
 * whatever its type (undefined: the item has none), for a repair to name exactly; `owner` the end
 * of the owner's last lease, when a number.
 */
export type SlotWrite =
  | { readonly ok: true; readonly next: number }
  | {
      readonly ok: false;
      readonly next?: number;
      readonly found?: unknown;
      readonly owner?: number;
      /** The lane that wrote `owner`, when recorded. */
      readonly holder?: string;
    };

/**
 * The writes a lease makes, on a lane's item. Without `idleBefore` the write is the owner's (the
 * lane's own sends): it records the new `next` as `owner`, and the lane as `holder`. With it, the
 * write is a borrow: it succeeds only while `owner` is absent or before `idleBefore`, and leaves it;
 * with `holder` too (the sibling's borrow), also while `holder` is that lane, and it records
 * `owner` and `holder` as the owner's write does.
 */
export interface SlotStore {
  /** `next += span` if `lower <= next <= upper`; the new `next`, or the `next` found. */
  advance(
    lane: LaneId,
    span: number,
    lower: number,
    upper: number,
    idleBefore?: number,
    holder?: LaneId,
  ): Promise<SlotWrite>;
  /** `next = value` if the item has no `next` or `next < before`; the `next` found when not. */
  restart(lane: LaneId, value: number, before: number, idleBefore?: number, holder?: LaneId): Promise<SlotWrite>;
  /** `next = value` if `next` is still exactly `found` (a stored value as a failed write returned it). */
  repair(lane: LaneId, found: unknown, value: number): Promise<SlotWrite>;
}

/** The item of a lane: distinct from Powertools' `<prefix>#<hash>` records. */
export function laneItemId(keyPrefix: string, lane: LaneId): string {
  return `rate#${keyPrefix}#${lane}`;
}

/** How long a lane's item outlives its last write (DynamoDB TTL cleans it up). */
const ITEM_TTL_SECONDS = 24 * 60 * 60;

/** The DynamoDB client calls the store makes. */
export interface UpdateClient {
  send(command: UpdateItemCommand): Promise<{ Attributes?: Record<string, AttributeValue> }>;
}

/** The slot store on the idempotency table (attribute `next`, TTL on `expiration`). */
export function dynamoDbSlotStore(options: {
  readonly client: UpdateClient;
  readonly tableName: string;
  readonly keyPrefix: string;
  readonly now?: () => number;
}): SlotStore {
  const now = options.now ?? Date.now;
  const write = async (
    lane: LaneId,
    update: string,
    condition: string,
    values: Record<string, number>,
    stored: Record<string, AttributeValue> = {},
  ): Promise<SlotWrite> => {
    const expressionValues: Record<string, AttributeValue> = {
      ':exp': { N: String(Math.floor(now() / 1000) + ITEM_TTL_SECONDS) },
      ...stored,
    };
    for (const [name, value] of Object.entries(values)) expressionValues[name] = { N: String(Math.round(value)) };
    try {
      const response = await options.client.send(
        new UpdateItemCommand({
          TableName: options.tableName,
          Key: { id: { S: laneItemId(options.keyPrefix, lane) } },
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: {
            '#next': 'next',
            '#exp': 'expiration',
            ...(update.includes('#owner') || condition.includes('#owner') ? { '#owner': 'owner' } : {}),
            ...(update.includes('#holder') || condition.includes('#holder') ? { '#holder': 'holder' } : {}),
          },
          ExpressionAttributeValues: expressionValues,
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true, next: Number(response.Attributes?.next?.N ?? values[':value'] ?? 0) };
    } catch (error) {
      if (
        !(error instanceof ConditionalCheckFailedException) &&
        (error as Error).name !== 'ConditionalCheckFailedException'
      )
        throw error;
      const item = (error as ConditionalCheckFailedException).Item;
      const old = item?.next;
      const owner = {
        ...(item?.owner?.N !== undefined ? { owner: Number(item.owner.N) } : {}),
        ...(item?.holder?.S !== undefined ? { holder: item.holder.S } : {}),
      };
      if (old === undefined) return { ok: false, ...owner };
      return old.N !== undefined
        ? { ok: false, next: Number(old.N), found: old, ...owner }
        : { ok: false, found: old, ...owner };
    }
  };
  /** A borrow's condition: the owner has leased nothing since before `idleBefore`. */
  const ownerIdle = '(attribute_not_exists(#owner) OR #owner < :idle)';
  /** A holding borrow's: that, or the borrowing lane holds the item already. */
  const heldOrIdle = '(attribute_not_exists(#owner) OR #owner < :idle OR #holder = :holder)';
  const holderValue = (lane: LaneId) => ({ ':holder': { S: lane } });
  return {
    advance: (lane, span, lower, upper, idleBefore, holder) => {
      const bounds = { ':span': span, ':lower': lower, ':upper': upper };
      // The owner's, or a holding borrow: `next` and `owner` both become the old `next` plus the span.
      const owned = 'SET #next = #next + :span, #owner = #next + :span, #holder = :holder, #exp = :exp';
      if (idleBefore === undefined)
        return write(lane, owned, '#next BETWEEN :lower AND :upper', bounds, holderValue(lane));
      if (holder !== undefined) {
        const condition = `#next BETWEEN :lower AND :upper AND ${heldOrIdle}`;
        return write(lane, owned, condition, { ...bounds, ':idle': idleBefore }, holderValue(holder));
      }
      const condition = `#next BETWEEN :lower AND :upper AND ${ownerIdle}`;
      return write(lane, 'ADD #next :span SET #exp = :exp', condition, { ...bounds, ':idle': idleBefore });
    },
    restart: (lane, value, before, idleBefore, holder) => {
      const stale = '(attribute_not_exists(#next) OR #next < :before)';
      const owned = 'SET #next = :value, #owner = :value, #holder = :holder, #exp = :exp';
      const values = { ':value': value, ':before': before };
      if (idleBefore === undefined) return write(lane, owned, stale, values, holderValue(lane));
      if (holder !== undefined) {
        return write(
          lane,
          owned,
          `${stale} AND ${heldOrIdle}`,
          { ...values, ':idle': idleBefore },
          holderValue(holder),
        );
      }
      return write(lane, 'SET #next = :value, #exp = :exp', `${stale} AND ${ownerIdle}`, {
        ...values,
        ':idle': idleBefore,
      });
    },
    repair: (lane, found, value) =>
      write(
        lane,
        'SET #next = :value, #exp = :exp',
        '#next = :found',
        { ':value': value },
        // What a failed write returned (an AttributeValue), or a number.
        { ':found': typeof found === 'number' ? { N: String(found) } : (found as AttributeValue) },
      ),
  };
}
