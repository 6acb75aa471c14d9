/**
 * What every local table needs once created (or found): to be ACTIVE, with TTL on, as the construct
 * makes them. Shared by resources.ts and callback-resources.ts.
 */
import { DescribeTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Checks that a table just created (or found) is ACTIVE, and enables its TTL on `ttlAttribute` (once). */
export async function activeWithTtl(dynamodb: DynamoDBClient, tableName: string, ttlAttribute: string): Promise<void> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.TableStatus !== 'ACTIVE') throw new Error(`table ${tableName} is ${Table?.TableStatus}`);
  await dynamodb
    .send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    )
    .catch((error: Error) => {
      // Enabling TTL twice is refused; anything else is a real problem.
      if (!/already enabled/i.test(error.message)) throw error;
    });
}
