/**
 * Properties every function and table of the pipeline shares, so the send
 * function, the ledger function, the status function and both tables cannot
 * drift apart.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING } from './bundling';

/** NodejsFunction bundling from {@link BUNDLING} (the local build uses the same values). */
export function functionBundling(): nodejs.BundlingOptions {
  return {
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    sourceMap: BUNDLING.sourceMap,
    externalModules: [...BUNDLING.externalModules],
    mainFields: [...BUNDLING.mainFields],
    // Warnings and errors only: keeps `cdk synth --quiet` quiet.
    logLevel: nodejs.LogLevel.WARNING,
  };
}

/**
 * An on-demand table keyed by one string attribute, with TTL, point-in-time
 * recovery, encryption, and deletion protection unless it may be removed.
 */
export function protectedTableProps(
  keys: { readonly partitionKey: string; readonly ttlAttribute: string },
  removalPolicy: RemovalPolicy,
): dynamodb.TableProps {
  return {
    partitionKey: { name: keys.partitionKey, type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: keys.ttlAttribute,
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    removalPolicy,
  };
}
