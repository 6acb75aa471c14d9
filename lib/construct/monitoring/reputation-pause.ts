/**
 * The optional automatic pause: a tiny function the reputation alarms invoke (a CloudWatch Lambda
 * alarm action, no topic in between) that turns sending off for the pipeline's configuration set
 * with SES v2 PutConfigurationSetSendingOptions (its handler: lambdas/reputation-pause/handler.ts,
 * bundled like the other functions). It can only pause, only this configuration set; resuming is a
 * person's decision (docs/operators.md: "Automatic pause").
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { handlerCode } from '../assets';
import { RUNTIME } from '../common/runtime';

/** The pause function and its log group, in `scope`; returns the alarm action that invokes it. */
export function buildReputationPause(
  scope: Construct,
  props: { readonly configurationSetName: string; readonly logRetentionDays: number },
): { readonly fn: lambda.Function; readonly action: cw.IAlarmAction } {
  const stack = Stack.of(scope);
  const logGroup = new logs.LogGroup(scope, 'PauseSendingLogs', {
    retention: props.logRetentionDays as logs.RetentionDays,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, 'PauseSendingRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: 'Pauses sending for the email pipeline configuration set when a reputation alarm fires',
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PauseThisConfigurationSet',
      actions: ['ses:PutConfigurationSetSendingOptions'],
      resources: [
        stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: props.configurationSetName }),
      ],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'WriteOwnLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  const fn = new lambda.Function(scope, 'PauseSending', {
    runtime: RUNTIME,
    handler: 'index.handler',
    code: handlerCode('reputation-pause'),
    description: 'Pauses sending for the email pipeline configuration set (reputation alarm action)',
    role,
    logGroup,
    timeout: Duration.seconds(10),
    memorySize: 128,
    environment: { CONFIGURATION_SET_NAME: props.configurationSetName },
  });
  Validations.of(fn).acknowledge(
    {
      id: 'Serverless::Serverless-LambdaDLQ',
      reason:
        'Invoked only by a CloudWatch alarm action on its transition to ALARM; a failed pause stays visible as the alarm ' +
        '(which pages) and in this log group, and the runbook pauses by hand with the same call. A DLQ would need its own watching.',
    },
    {
      id: 'Serverless::Serverless-LambdaTracing',
      reason:
        'One SES call per alarm transition, logged with the alarm and the configuration set; a trace would add nothing ' +
        'an operator needs to see that the pause happened.',
    },
  );
  return { fn, action: new LambdaAction(fn) };
}
