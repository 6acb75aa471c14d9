/**
 * The customer-managed KMS keys: each rotates and goes (or stays) with the stateful resources; and
 * what a caller of a table encrypted with one needs on it, through DynamoDB only.
 */
import { Stack, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/** A customer-managed key with rotation on, removed (or kept) with the stateful resources. */
export function rotatingKey(scope: Construct, id: string, description: string, removalPolicy: RemovalPolicy): kms.Key {
  return new kms.Key(scope, id, { description, enableKeyRotation: true, removalPolicy });
}

/**
 * What a caller of a table needs on its customer-managed key, and only through DynamoDB
 * (`kms:ViaService`): DynamoDB decrypts the table's key with the caller's permission on each
 * first access (and every five minutes); writers may also need it to encrypt.
 */
export function tableKeyStatement(sid: string, key: kms.IKey, access: 'read' | 'write'): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid,
    actions: ['kms:Decrypt', 'kms:DescribeKey', ...(access === 'write' ? ['kms:Encrypt', 'kms:GenerateDataKey'] : [])],
    resources: [key.keyArn],
    conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Stack.of(key).region}.amazonaws.com` } },
  });
}
