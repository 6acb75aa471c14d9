/**
 * The idempotency store: the table of Powertools' records, one per dedupe key,
 * and the customer-managed key of both tables (this one and the send ledger's)
 * unless the AWS-managed key is chosen.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { IDEMPOTENCY_TABLE } from '../handler-env';
import { rotatingKey } from '../common/keys';
import { protectedTableProps } from '../common/tables';

/** What {@link buildIdempotencyStore} made. */
export interface IdempotencyStore {
  /** Powertools idempotency records, one per dedupe key. */
  readonly table: dynamodb.Table;
  /** The key of both tables; undefined with `customerManagedTableKey: false` (`aws/dynamodb`). */
  readonly tableKey?: kms.Key;
}

/** The key (unless turned off) and the idempotency table, in `scope` (the pipeline). */
export function buildIdempotencyStore(
  scope: Construct,
  props: { readonly removalPolicy: RemovalPolicy; readonly customerManagedTableKey: boolean },
): IdempotencyStore {
  const tableKey = props.customerManagedTableKey
    ? rotatingKey(
        scope,
        'TableKey',
        'Encrypts the email pipeline tables (idempotency records, send ledger)',
        props.removalPolicy,
      )
    : undefined;
  const table = new dynamodb.Table(
    scope,
    'IdempotencyTable',
    protectedTableProps(IDEMPOTENCY_TABLE, props.removalPolicy, tableKey),
  );
  return { table, ...(tableKey ? { tableKey } : {}) };
}
