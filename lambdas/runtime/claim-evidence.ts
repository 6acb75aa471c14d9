/**
 * The claim a send was made under, read as evidence for the ledger's binding check
 * (lambdas/kernel/ledger/binding.ts): the send function's idempotency record, one at a time or
 * a batch's at once.
 */
import { BatchGetItemCommand, GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { claimEvidence, claimRecordId, type ClaimEvidence } from '../kernel/ledger/binding';

/**
 * The claim a send was made under (the send function's idempotency record), as evidence for
 * binding.ts; undefined when the reference is malformed or names no record. One GetItem: the
 * claim is written before SES is called, so it is there for any event. `consistent: false` reads
 * at half the cost and may miss a write of the last second: the caller reads again, consistently,
 * before it refuses anything on what it read.
 */
export async function readClaimEvidence(
  client: Pick<DynamoDBClient, 'send'>,
  claimsTableName: string,
  keyPrefix: string,
  ref: string | undefined,
  options: { readonly consistent: boolean } = { consistent: true },
): Promise<ClaimEvidence | undefined> {
  const id = ref === undefined ? undefined : claimRecordId(keyPrefix, ref);
  if (id === undefined) return undefined;
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: claimsTableName,
      // `id`: the partition key of Powertools' DynamoDB persistence layer (IDEMPOTENCY_TABLE in lib/construct/handler-env.ts).
      Key: marshall({ id }),
      ConsistentRead: options.consistent,
    }),
  );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return claimEvidence(Item ? (unmarshall(Item as any) as Record<string, unknown>) : undefined);
}

/** BatchGetItem's limit of keys per request. */
const BATCH_GET_LIMIT = 100;

/**
 * The claims of several sends, eventually consistent, in one BatchGetItem per 100 references (a
 * ledger batch's `Send` events, read together instead of one GetItem each). The map holds an
 * answer for each reference DynamoDB answered: the claim, or undefined when there is none or the
 * reference is malformed. A reference it left unprocessed is not in the map; the caller reads it
 * alone, as it reads anything this read could not bind.
 */
export async function readClaimsEvidence(
  client: Pick<DynamoDBClient, 'send'>,
  claimsTableName: string,
  keyPrefix: string,
  refs: Iterable<string>,
): Promise<Map<string, ClaimEvidence | undefined>> {
  const answered = new Map<string, ClaimEvidence | undefined>();
  const byId = new Map<string, string>();
  for (const ref of new Set(refs)) {
    const id = claimRecordId(keyPrefix, ref);
    if (id === undefined) answered.set(ref, undefined);
    else byId.set(id, ref);
  }
  const ids = [...byId.keys()];
  for (let start = 0; start < ids.length; start += BATCH_GET_LIMIT) {
    const chunk = ids.slice(start, start + BATCH_GET_LIMIT);
    const { Responses = {}, UnprocessedKeys = {} } = await client.send(
      new BatchGetItemCommand({
        RequestItems: { [claimsTableName]: { Keys: chunk.map((id) => marshall({ id })), ConsistentRead: false } },
      }),
    );
    const unprocessed = new Set(
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      (UnprocessedKeys[claimsTableName]?.Keys ?? []).map((key) => String(unmarshall(key as any).id)),
    );
    const found = new Map<string, Record<string, unknown>>();
    for (const item of Responses[claimsTableName] ?? []) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const record = unmarshall(item as any) as Record<string, unknown>;
      found.set(String(record.id), record);
    }
    for (const id of chunk) {
      if (!unprocessed.has(id)) answered.set(byId.get(id) as string, claimEvidence(found.get(id)));
    }
  }
  return answered;
}
