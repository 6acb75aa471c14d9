/**
 * The send-email function: its own execution role (no managed policies; it
 * writes to its own log group only), the pre-built bundle, the environment from
 * the settings, and the work queue, the high-priority queue and each team's queue as its event
 * sources (batches, partial batch responses; no batching window for the high one; a team's
 * mapping runs the team's part of maxConcurrency: settings/teams.ts teamConcurrency). A message not
 * yet due goes to the schedule queue (schedule-function.ts) and comes back when due. Its other
 * permissions are in grants.ts.
 */
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import { teamConcurrency, type ResolvedSettings } from '../../settings';
import { handlerCode } from '../assets';
import { functionNodeOptions, handlerEnvironment } from '../handler-env';
import { RUNTIME } from '../common/runtime';

/** What {@link buildSendFunction} made. */
export interface SendFunction {
  /** The function's execution role (no managed policies). */
  readonly role: iam.Role;
  /** The send-email function, fed by the work queue. */
  readonly sendFunction: lambda.Function;
}

/** The role and the function, with the work queue as its event source, in `scope` (the pipeline). */
export function buildSendFunction(
  scope: Construct,
  props: {
    readonly settings: ResolvedSettings;
    /** The Powertools service name (`service` dimension of the custom metrics). */
    readonly serviceName: string;
    readonly logGroup: logs.LogGroup;
    readonly topic: sns.ITopic;
    readonly highPriorityTopic: sns.ITopic;
    readonly table: dynamodb.ITable;
    readonly queue: sqs.IQueue;
    readonly highPriorityQueue: sqs.IQueue;
    /** Where a message not yet due waits (the schedule function's lane). */
    readonly scheduleQueue: sqs.IQueue;
    readonly deadLetterQueue: sqs.IQueue;
    /** The attachments bucket, which the function reads objects of. */
    readonly attachmentsBucketName: string;
    /** The teams' topics, queues and senders. @default none */
    readonly teams?: TeamRoutes;
    /** Each team's queue (queues.ts), its own event source: by team name. @default none */
    readonly teamQueues?: Readonly<Record<string, sqs.IQueue>>;
  },
): SendFunction {
  const { settings } = props;
  // The shared mapping (also used by the local pipeline), plus what only the
  // deployed function sets.
  const environment: Record<string, string> = {
    ...handlerEnvironment(settings, {
      topicArn: props.topic.topicArn,
      tableName: props.table.tableName,
      sourceQueueUrl: props.queue.queueUrl,
      scheduleQueueUrl: props.scheduleQueue.queueUrl,
      deadLetterQueueUrl: props.deadLetterQueue.queueUrl,
      attachmentsBucketName: props.attachmentsBucketName,
      highPriorityQueueUrl: props.highPriorityQueue.queueUrl,
      highPriorityTopicArn: props.highPriorityTopic.topicArn,
      ...(props.teams !== undefined ? { teams: props.teams } : {}),
    }),
    POWERTOOLS_SERVICE_NAME: props.serviceName,
    NODE_OPTIONS: functionNodeOptions(settings.memorySizeMb),
  };

  // Own role, no AWSLambdaBasicExecutionRole: logs go to this log group only.
  const role = new iam.Role(scope, 'SendFunctionRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: 'Execution role of the email pipeline send function',
  });
  props.logGroup.grantWrite(role);

  const sendFunction = new lambda.Function(scope, 'SendFunction', {
    role,
    code: handlerCode('send-email'),
    handler: 'index.handler',
    runtime: RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(settings.functionTimeoutSeconds),
    memorySize: settings.memorySizeMb,
    logGroup: props.logGroup,
    environment,
    description: 'Sends each queued email once: idempotency record in DynamoDB, then SES v2 SendEmail',
  });

  sendFunction.addEventSource(
    new SqsEventSource(props.queue, {
      batchSize: settings.batchSize,
      maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
      maxConcurrency: settings.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  // The high lane: its own mapping, no batching window (a sign-in code does not wait for a batch to fill).
  sendFunction.addEventSource(
    new SqsEventSource(props.highPriorityQueue, {
      // Without a batching window, a batch holds at most 10 records.
      batchSize: Math.min(settings.batchSize, 10),
      maxBatchingWindow: Duration.seconds(0),
      maxConcurrency: settings.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  // A team's queue: its own mapping, as the work queue's, given the team's part of maxConcurrency (its
  // share of the rate is kept by its lane of the rate lease, send/pacing-policy.ts).
  for (const [team, queue] of Object.entries(props.teamQueues ?? {})) {
    sendFunction.addEventSource(
      new SqsEventSource(queue, {
        batchSize: settings.batchSize,
        maxBatchingWindow: Duration.seconds(settings.maxBatchingWindowSeconds),
        maxConcurrency: teamConcurrency(settings.teams ?? {}, team, settings.maxConcurrency),
        reportBatchItemFailures: true,
      }),
    );
  }
  return { role, sendFunction };
}
