/**
 * The table properties both tables share (the idempotency records, the send ledger): on demand,
 * keyed by one string attribute, with TTL, point-in-time recovery, encryption and deletion protection.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';

/**
 * An on-demand table keyed by one string attribute, with TTL, point-in-time
 * recovery, encryption (with `encryptionKey`, a customer-managed key; without,
 * the AWS-managed key `aws/dynamodb`), and deletion protection unless it may
 * be removed.
 */
export function protectedTableProps(
  keys: { readonly partitionKey: string; readonly ttlAttribute: string },
  removalPolicy: RemovalPolicy,
  encryptionKey: kms.IKey | undefined,
): dynamodb.TableProps {
  return {
    partitionKey: { name: keys.partitionKey, type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: keys.ttlAttribute,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    ...(encryptionKey
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey }
      : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
    deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    removalPolicy,
  };
}
