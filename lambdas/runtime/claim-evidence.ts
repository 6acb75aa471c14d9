/**
 * The claim a send was made under, read as evidence for the ledger's binding check
 * (lambdas/kernel/ledger/binding.ts): the send function's idempotency record.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
