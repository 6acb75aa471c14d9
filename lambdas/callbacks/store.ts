/**
 * The callbacks table as the callback function uses it: one item per callback (partition the
 * ledger key, sort the webhook-id) that is at once its claim (a try under way holds a lease;
 * delivered is final), its fixed body and its log (tries, last result), and one state item per
 * target that a 410 Gone writes (disabled until `email-pipeline callbacks enable` deletes it).
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import {
  CALLBACK_ITEM,
  CALLBACK_RETENTION_SECONDS,
  CALLBACK_STATE_KEY_PREFIX,
  CALLBACKS_TABLE,
} from '../kernel/callbacks/names';

/** The callback a try is about. */
export interface StoredCallbackRef {
  readonly target: string;
  readonly key: string;
  readonly id: string;
  readonly status: string;
  readonly at: string;
  readonly body: string;
  readonly replayId?: string;
}

/** What a claim found. */
export type Claimed =
  | { readonly kind: 'claimed'; readonly body: string; readonly attempts: number }
  | { readonly kind: 'delivered' }
  | { readonly kind: 'busy'; readonly leaseLeftMs: number };

/** How long a target's disabled state is trusted before it is read again. */
const STATE_CACHE_MS = 30_000;

/** The claim's attribute names (the condition adds `#state` or `#replays`). */
const CLAIM_NAMES = {
  '#team': CALLBACK_ITEM.team,
  '#status': CALLBACK_ITEM.status,
  '#body': CALLBACK_ITEM.body,
  '#at': CALLBACK_ITEM.at,
  '#day': CALLBACK_ITEM.day,
  '#attempts': CALLBACK_ITEM.attempts,
  '#lease': CALLBACK_ITEM.leaseUntil,
  '#expiration': CALLBACKS_TABLE.ttlAttribute,
};

export class CallbackStore {
  private readonly states = new Map<string, { readonly reason?: string; readonly at: number }>();

  constructor(
    private readonly dynamodb: Pick<DynamoDBClient, 'send'>,
    private readonly tableName: string,
    private readonly now: () => number,
  ) {}

  private itemKey(key: string, id: string) {
    return marshall({ [CALLBACKS_TABLE.partitionKey]: key, [CALLBACKS_TABLE.sortKey]: id });
  }

  /** A stored callback (for a replay), or undefined. */
  async read(key: string, id: string): Promise<Omit<StoredCallbackRef, 'replayId'> | undefined> {
    const { Item } = await this.dynamodb.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.itemKey(key, id), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const item = unmarshall(Item);
    return {
      target: String(item[CALLBACK_ITEM.team]),
      key,
      id,
      status: String(item[CALLBACK_ITEM.status]),
      at: String(item[CALLBACK_ITEM.at]),
      body: String(item[CALLBACK_ITEM.body]),
    };
  }

  /**
   * Claims the callback for one try of at most `leaseMs`: not delivered (a replay: not delivered
   * by this replay), no other try under way. The first claim stores the body every try sends.
   */
  async claim(callback: StoredCallbackRef, leaseMs: number): Promise<Claimed> {
    const now = this.now();
    const replay = callback.replayId !== undefined;
    try {
      const { Attributes } = await this.dynamodb.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.itemKey(callback.key, callback.id),
          UpdateExpression:
            'SET #body = if_not_exists(#body, :body), #team = :team, #status = :status, #at = if_not_exists(#at, :at),' +
            ' #day = if_not_exists(#day, :day), #expiration = if_not_exists(#expiration, :expiration),' +
            ' #lease = :lease ADD #attempts :one',
          ConditionExpression:
            `(attribute_not_exists(#lease) OR #lease < :now) AND ` +
            (replay ? 'NOT contains(#replays, :replayId)' : '(attribute_not_exists(#state) OR #state <> :delivered)'),
          ExpressionAttributeNames: replay
            ? { ...CLAIM_NAMES, '#replays': CALLBACK_ITEM.replays }
            : { ...CLAIM_NAMES, '#state': CALLBACK_ITEM.state },
          ExpressionAttributeValues: marshall({
            ':body': callback.body,
            ':team': callback.target,
            ':status': callback.status,
            ':at': callback.at,
            ':day': callback.at.slice(0, 10),
            ':expiration': Math.floor(now / 1000) + CALLBACK_RETENTION_SECONDS,
            ':lease': now + leaseMs,
            ':one': 1,
            ':now': now,
            ...(replay ? { ':replayId': callback.replayId } : { ':delivered': 'delivered' }),
          }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const item = unmarshall(Attributes ?? {});
      return {
        kind: 'claimed',
        body: String(item[CALLBACK_ITEM.body]),
        attempts: Number(item[CALLBACK_ITEM.attempts]),
      };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const { Item } = await this.dynamodb.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(callback.key, callback.id),
        ConsistentRead: true,
      }),
    );
    const item = Item ? unmarshall(Item) : {};
    const lease = Number(item[CALLBACK_ITEM.leaseUntil] ?? 0);
    if (lease >= now) return { kind: 'busy', leaseLeftMs: lease - now };
    // Delivered (by this replay, or at all): the claim was refused for no other reason.
    return { kind: 'delivered' };
  }

  /** A 2xx answered: final (a replay records its id, the item's state stays as it was). */
  async delivered(callback: StoredCallbackRef, result: string): Promise<void> {
    const replay = callback.replayId !== undefined;
    await this.dynamodb.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(callback.key, callback.id),
        UpdateExpression: replay
          ? 'SET #last = :result REMOVE #lease ADD #replays :replayIds'
          : 'SET #state = :delivered, #deliveredAt = :at, #last = :result REMOVE #lease',
        ExpressionAttributeNames: {
          '#last': CALLBACK_ITEM.lastResult,
          '#lease': CALLBACK_ITEM.leaseUntil,
          ...(replay
            ? { '#replays': CALLBACK_ITEM.replays }
            : { '#state': CALLBACK_ITEM.state, '#deliveredAt': CALLBACK_ITEM.deliveredAt }),
        },
        ExpressionAttributeValues: replay
          ? { ':result': { S: result }, ':replayIds': { SS: [callback.replayId ?? ''] } }
          : marshall({ ':delivered': 'delivered', ':at': new Date(this.now()).toISOString(), ':result': result }),
      }),
    );
  }

  /** A try failed and another will come: the lease is let go, the result kept. */
  async release(callback: StoredCallbackRef, result: string): Promise<void> {
    await this.update(callback, 'SET #last = :result REMOVE #lease', { ':result': result });
  }

  /** Given up on (dead-lettered): the item says so, unless it was delivered meanwhile. */
  async failed(callback: StoredCallbackRef, result: string): Promise<void> {
    if (callback.replayId !== undefined) return this.release(callback, result);
    await this.update(callback, 'SET #last = :result, #state = if_not_exists(#state, :failed) REMOVE #lease', {
      ':result': result,
      ':failed': 'failed',
    });
  }

  private async update(callback: StoredCallbackRef, expression: string, values: Record<string, string>): Promise<void> {
    await this.dynamodb.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.itemKey(callback.key, callback.id),
        UpdateExpression: expression,
        ExpressionAttributeNames: {
          '#last': CALLBACK_ITEM.lastResult,
          '#lease': CALLBACK_ITEM.leaseUntil,
          ...(expression.includes('#state') ? { '#state': CALLBACK_ITEM.state } : {}),
        },
        ExpressionAttributeValues: marshall(values),
      }),
    );
  }

  private stateKey(target: string) {
    return marshall({
      [CALLBACKS_TABLE.partitionKey]: CALLBACK_STATE_KEY_PREFIX + target,
      [CALLBACKS_TABLE.sortKey]: 'state',
    });
  }

  /** Disables a target's callback (a 410 Gone), with why. */
  async disable(target: string, reason: string): Promise<void> {
    await this.dynamodb.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...this.stateKey(target),
          ...marshall({ disabledAt: new Date(this.now()).toISOString(), disabledReason: reason }),
        },
      }),
    );
    this.states.set(target, { reason, at: this.now() });
  }

  /** Why the target's callback is disabled, or undefined (read at most every 30 s per container). */
  async disabledReason(target: string): Promise<string | undefined> {
    const cached = this.states.get(target);
    if (cached && this.now() - cached.at < STATE_CACHE_MS) return cached.reason;
    const { Item } = await this.dynamodb.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.stateKey(target) }),
    );
    const item = Item ? unmarshall(Item) : undefined;
    const reason = item ? `${String(item.disabledReason)} (since ${String(item.disabledAt)})` : undefined;
    this.states.set(target, { ...(reason !== undefined ? { reason } : {}), at: this.now() });
    return reason;
  }
}
