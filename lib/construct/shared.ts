/**
 * What the pipeline's parts share, so they cannot drift apart: the Lambda
 * runtime, the dead-letter queues' retention and the default service name; the
 * customer-managed keys; the table properties of both tables (idempotency
 * records, send ledger) and what a caller needs on their key; the queue policy
 * that names who may send; and the cdk-nag Serverless rules that do not apply
 * to its functions and dead-letter queues.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS } from '../settings';
import { SERVICE_NAME } from './handler-env';

/** How long the dead-letter queue keeps a message: the SQS maximum, so operators have time to look. */
export const DLQ_RETENTION = Duration.seconds(DLQ_RETENTION_SECONDS);

/** The Lambda runtime; {@link BUNDLING}.target must name the same Node.js major version. */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;

/** Default of {@link EmailPipelineProps.serviceName} (the local pipeline's too). */
export const DEFAULT_SERVICE_NAME = SERVICE_NAME;

/** A customer-managed key with rotation on, removed (or kept) with the stateful resources. */
export function rotatingKey(scope: Construct, id: string, description: string, removalPolicy: RemovalPolicy): kms.Key {
  return new kms.Key(scope, id, { description, enableKeyRotation: true, removalPolicy });
}

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

/**
 * A queue policy statement that denies sqs:SendMessage to every principal unless one of `allowed`
 * matches (`aws:SourceArn` of a service delivering, `aws:PrincipalArn` of a principal). A Deny, so
 * that no IAM policy of the account can open the queue. The keys of one `ArnNotEquals` all must
 * hold for the deny to apply: one allowed key that matches is enough to pass.
 */
export function onlyTheseSend(
  queue: sqs.IQueue,
  sid: string,
  allowed: Readonly<Record<string, readonly string[]>>,
): void {
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid,
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnNotEquals: allowed },
    }),
  );
}

/** cdk-nag Serverless rules that do not apply to this design, each with its reason. */
export function acknowledgeServerlessRules(parts: {
  readonly deadLetterQueues: readonly sqs.IQueue[];
  readonly functions: readonly lambda.IFunction[];
}): void {
  for (const dlq of parts.deadLetterQueues) {
    Validations.of(dlq).acknowledge({
      id: 'Serverless::Serverless-SQSRedrivePolicy',
      reason:
        'This queue is itself a dead-letter queue; a DLQ of a DLQ would only move the same messages once more. ' +
        'Its alarm and the redrive tools (npm run dlq) are how operators empty it.',
    });
  }
  for (const fn of parts.functions) {
    Validations.of(fn).acknowledge(
      {
        id: 'Serverless::Serverless-LambdaDLQ',
        reason:
          'The function is invoked only synchronously (an SQS event source mapping, or its function URL); a Lambda DLQ applies to ' +
          "asynchronous invocations. Failed messages go to the source queue's DLQ (its redrive policy).",
      },
      {
        id: 'Serverless::Serverless-LambdaTracing',
        reason:
          'X-Ray tracing is left off: each decision is a structured log line with the dedupe key, and the custom metrics ' +
          'count every outcome; turn tracing on with an escape hatch if needed.',
      },
    );
    for (const child of fn.node.findAll()) {
      if (child instanceof lambda.CfnEventSourceMapping) {
        Validations.of(child).acknowledge({
          id: 'Serverless::Serverless-LambdaEventSourceMappingDestination',
          reason:
            'An on-failure destination is for stream sources (Kinesis, DynamoDB, Kafka); for an SQS source the redrive policy of the queue ' +
            '(maxReceiveCount to the DLQ) is the failure destination, and it is set. A mapping of a DLQ itself (the ledger DLQ, enabled ' +
            'only while an operator redrives it) leaves a failed message in that DLQ, where it would be anyway.',
        });
      }
    }
  }
}
