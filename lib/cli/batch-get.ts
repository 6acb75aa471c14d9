/**
 * The CLI's reads of many items of one table by their keys: BatchGetItem, 100 keys a request, the
 * keys DynamoDB leaves unprocessed asked again after a short, growing wait (five rounds at most,
 * then an OperationError). Used by `callbacks replay --team` and `deliveries` (the teams of keys).
 */
import { BatchGetCommand, type BatchGetCommandOutput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { OperationError } from './errors';

/** The most keys one BatchGetItem takes. */
export const BATCH_GET_KEYS = 100;

/** Requests for one slice of keys before the read gives up. */
const MAX_ROUNDS = 5;

export interface BatchGetOptions {
  /** The table as an error names it (`callbacks table`). */
  readonly label: string;
  /** Only these attributes of each item (a ProjectionExpression). @default every attribute */
  readonly attributes?: readonly string[];
  /** Milliseconds before asking again for the unprocessed keys of round `round` (1, 2, ...). @default 25 ms doubled each round */
  readonly backoffMs?: (round: number) => number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The items of `keys` that exist, in no particular order. */
export async function batchGetAll(
  db: Pick<DynamoDBDocumentClient, 'send'>,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  options: BatchGetOptions,
): Promise<Record<string, unknown>[]> {
  const { attributes } = options;
  const projection = attributes
    ? {
        ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name])),
      }
    : {};
  const backoffMs = options.backoffMs ?? ((round: number) => 25 * 2 ** (round - 1));
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_KEYS) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + BATCH_GET_KEYS);
    for (let round = 0; pending && pending.length > 0; round += 1) {
      if (round === MAX_ROUNDS) {
        throw new OperationError(`DynamoDB kept leaving keys of the ${options.label} unread: try again.`);
      }
      if (round > 0) await pause(backoffMs(round));
      const answer: BatchGetCommandOutput = await db.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ...projection } } }),
      );
      out.push(...(answer.Responses?.[tableName] ?? []));
      pending = answer.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return out;
}
