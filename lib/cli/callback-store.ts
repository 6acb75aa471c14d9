/**
 * What `email-pipeline callbacks` reads and changes (callbacks-command.ts decides what and prints):
 * the callbacks DLQ (read with the dlq tooling's scan, moved back with its moveMatching, minus the
 * function's diagnosis), the callbacks table (one key's callbacks, those since a time through the
 * `by-day` index, a callback target's state item) and the replay messages sent to the callbacks queue.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  DeleteCommand,
  QueryCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { CALLBACK_ATTRIBUTE, CALLBACKS_TABLE } from '../../lambdas/kernel/callbacks/names';
import { moveMatching, scan } from '../dlq/select';
import { batchGetAll } from './batch-get';
import {
  callbackRow,
  daysSince,
  describeCallbackLetter,
  replayBatches,
  selects,
  stateItemKey,
  type CallbackLetter,
  type CallbackRow,
  type CallbackSelector,
} from './callbacks';
import { OperationError } from './errors';

/** What a redrive leaves behind: the function's diagnosis (a redriven callback starts a fresh retry window). */
const DIAGNOSIS = new Set<string>([CALLBACK_ATTRIBUTE.failure, CALLBACK_ATTRIBUTE.firstTry]);

/** The callbacks DLQ's messages (up to `max` scanned) that `selector` takes, none removed. */
export async function readCallbackLetters(
  sqs: SQSClient,
  dlqUrl: string,
  selector: CallbackSelector,
  max = 10_000,
): Promise<{ letters: CallbackLetter[]; scanned: number }> {
  const letters: CallbackLetter[] = [];
  const { scanned } = await scan(sqs, { dlqUrl, maxScanned: max }, async (message) => {
    const letter = describeCallbackLetter(message);
    if (selects(letter, selector)) letters.push(letter);
    return 'kept';
  });
  return { letters, scanned };
}

/** Moves the dead letters `selector` takes back to the callbacks queue, without the function's diagnosis. */
export async function redriveCallbacks(
  sqs: SQSClient,
  queues: { readonly dlqUrl: string; readonly sourceQueueUrl: string },
  selector: CallbackSelector,
): Promise<{ scanned: number; moved: number }> {
  const { scanned, moved } = await moveMatching(sqs, { ...queues, dropped: DIAGNOSIS }, (message) =>
    selects(describeCallbackLetter(message), selector) ? 'move' : 'keep',
  );
  return { scanned, moved };
}

/** Every page of a Query's items. */
async function queryAll(db: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const byTime = (a: CallbackRow, b: CallbackRow) => (a.at ?? '').localeCompare(b.at ?? '') || a.id.localeCompare(b.id);

/** The stored callbacks of one ledger key, oldest first. */
export async function callbacksOfKey(
  db: DynamoDBDocumentClient,
  tableName: string,
  key: string,
): Promise<CallbackRow[]> {
  const items = await queryAll(db, {
    TableName: tableName,
    KeyConditionExpression: '#key = :key',
    ExpressionAttributeNames: { '#key': CALLBACKS_TABLE.partitionKey },
    ExpressionAttributeValues: { ':key': key },
    ConsistentRead: true,
  });
  return items.map(callbackRow).sort(byTime);
}

/** The full items of `rows` (BatchGet, 100 at a time, unprocessed keys asked again). */
async function fullRows(
  db: DynamoDBDocumentClient,
  tableName: string,
  rows: readonly CallbackRow[],
): Promise<CallbackRow[]> {
  const { partitionKey, sortKey } = CALLBACKS_TABLE;
  const keys = rows.map((row) => ({ [partitionKey]: row.key, [sortKey]: row.id }));
  return (await batchGetAll(db, tableName, keys, { label: 'callbacks table' })).map(callbackRow);
}

/**
 * The stored callbacks of changes at or after `since` (ISO), oldest first: the `by-day` index
 * queried for each day from `since`'s to today's; only `team`'s when given (its items read whole).
 */
export async function callbacksSince(
  db: DynamoDBDocumentClient,
  tableName: string,
  since: string,
  options: { readonly team?: string; readonly now?: number } = {},
): Promise<CallbackRow[]> {
  const { indexName, partitionKey, sortKey } = CALLBACKS_TABLE.dayIndex;
  const found: CallbackRow[] = [];
  for (const day of daysSince(since, options.now ?? Date.now())) {
    const items = await queryAll(db, {
      TableName: tableName,
      IndexName: indexName,
      KeyConditionExpression: '#day = :day AND #at >= :since',
      ExpressionAttributeNames: { '#day': partitionKey, '#at': sortKey },
      ExpressionAttributeValues: { ':day': day, ':since': since },
    });
    found.push(...items.map(callbackRow));
  }
  if (options.team === undefined) return found.sort(byTime);
  return (await fullRows(db, tableName, found)).filter((row) => row.team === options.team).sort(byTime);
}

/**
 * Sends one replay message per stored callback to the callbacks queue, all with `replayId`;
 * entries SQS fails are sent again (three rounds), then reported.
 */
export async function sendReplays(
  sqs: SQSClient,
  queueUrl: string,
  rows: readonly CallbackRow[],
  replayId: string,
): Promise<number> {
  let sent = 0;
  for (const batch of replayBatches(rows, replayId)) {
    let entries = batch;
    for (let round = 0; entries.length > 0; round += 1) {
      const { Successful = [], Failed = [] } = await sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
      );
      sent += Successful.length;
      if (Failed.length > 0 && round === 2) {
        throw new OperationError(
          `Sent ${sent} of ${rows.length} replay message(s) (replay ${replayId}); SQS refused the others: ` +
            `${Failed[0]?.Code ?? ''} ${Failed[0]?.Message ?? ''}`.trimEnd() +
            '. Running the same replay again POSTs those already sent again (a new replay id).',
        );
      }
      const failed = new Set(Failed.map((f) => f.Id));
      entries = entries.filter((e) => failed.has(e.Id));
    }
  }
  return sent;
}

/** The attributes of a callback target's state item (callback-state#<team or *>, state). */
const STATE = { disabledAt: 'disabledAt', disabledReason: 'disabledReason' } as const;

/** What a callback target's state said before {@link enableCallback} deleted it. */
export interface DisabledState {
  readonly disabledAt: string;
  readonly disabledReason?: string;
}

/**
 * Deletes the state item of `team`'s callback (the pipeline's without one), so a callback a 410
 * Gone disabled is tried again; resolves to what it said when it was disabled, else undefined.
 */
export async function enableCallback(
  db: DynamoDBDocumentClient,
  tableName: string,
  team: string | undefined,
): Promise<DisabledState | undefined> {
  const { Attributes } = await db.send(
    new DeleteCommand({ TableName: tableName, Key: stateItemKey(team), ReturnValues: 'ALL_OLD' }),
  );
  const disabledAt = Attributes?.[STATE.disabledAt];
  if (typeof disabledAt !== 'string') return undefined;
  const reason = Attributes?.[STATE.disabledReason];
  return { disabledAt, ...(typeof reason === 'string' ? { disabledReason: reason } : {}) };
}
