/**
 * The cdk-nag Serverless rules that do not apply to the pipeline's functions and dead-letter
 * queues, acknowledged on each with its reason.
 */
import { Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

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
