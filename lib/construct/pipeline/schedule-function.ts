/**
 * The schedule function: the waiting lane of scheduled mail, fed by the schedule queue
 * (lambdas/schedule/). Small and apart from the send function: its own role, little memory, a
 * mapping of its own with few concurrent invocations, so a copy's waiting hops take none of the
 * send function's concurrency. It may send to the schedule queue (another hop) and to the lanes'
 * queues (a due copy), nothing else; it logs to the send function's log group, where scheduling
 * was logged before it had a function of its own.
 */
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { TeamRoutes } from '../../../lambdas/kernel/teams';
import type { ResolvedSettings } from '../../settings';
import { handlerCode } from '../assets';
import { SCHEDULE_FUNCTION, functionNodeOptions, scheduleEnvironment } from '../handler-env';
import { RUNTIME } from '../common/runtime';

export { SCHEDULE_FUNCTION } from '../handler-env';

/** What {@link buildScheduleFunction} made. */
export interface ScheduleFunction {
  readonly role: iam.Role;
  readonly scheduleFunction: lambda.Function;
}

/** The schedule function, its role and its mapping of the schedule queue, in `scope` (the pipeline). */
export function buildScheduleFunction(
  scope: Construct,
  props: {
    readonly settings: ResolvedSettings;
    /** The Powertools service name: its ScheduleHops count with the send function's. */
    readonly serviceName: string;
    /** The send function's log group. */
    readonly logGroup: logs.ILogGroup;
    readonly scheduleQueue: sqs.IQueue;
    readonly queue: sqs.IQueue;
    readonly highPriorityQueue: sqs.IQueue;
    /** Each team's queue: a due copy from one goes back there. @default none */
    readonly teamQueues?: Readonly<Record<string, sqs.IQueue>>;
    /** The teams' routes (their queues' URLs), as the send function has them. @default none */
    readonly teams?: TeamRoutes;
    readonly queueKey: kms.IKey;
  },
): ScheduleFunction {
  const role = new iam.Role(scope, 'ScheduleFunctionRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: 'Execution role of the email pipeline schedule function',
  });
  props.logGroup.grantWrite(role);
  const scheduleFunction = new lambda.Function(scope, 'ScheduleFunction', {
    role,
    code: handlerCode('schedule'),
    handler: 'index.handler',
    runtime: RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(SCHEDULE_FUNCTION.timeoutSeconds),
    memorySize: SCHEDULE_FUNCTION.memorySizeMb,
    logGroup: props.logGroup,
    environment: {
      ...scheduleEnvironment(
        props.settings,
        {
          scheduleQueueUrl: props.scheduleQueue.queueUrl,
          workQueueUrl: props.queue.queueUrl,
          highPriorityQueueUrl: props.highPriorityQueue.queueUrl,
          ...(props.teams ? { teams: props.teams } : {}),
        },
        props.serviceName,
      ),
      NODE_OPTIONS: functionNodeOptions(SCHEDULE_FUNCTION.memorySizeMb),
    },
    description: 'Scheduled mail: moves a copy not yet due on by one hop, and a due one to its lane queue',
  });
  // Receive, delete and the key's decrypt on the schedule queue.
  scheduleFunction.addEventSource(
    new SqsEventSource(props.scheduleQueue, {
      batchSize: SCHEDULE_FUNCTION.batchSize,
      maxBatchingWindow: Duration.seconds(0),
      maxConcurrency: SCHEDULE_FUNCTION.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
  scheduleFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'HopOrForward',
      actions: ['sqs:SendMessage'],
      resources: [
        props.scheduleQueue.queueArn,
        props.queue.queueArn,
        props.highPriorityQueue.queueArn,
        ...Object.values(props.teamQueues ?? {}).map((queue) => queue.queueArn),
      ],
    }),
  );
  scheduleFunction.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'EncryptCopies',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [props.queueKey.keyArn],
    }),
  );
  return { role, scheduleFunction };
}
