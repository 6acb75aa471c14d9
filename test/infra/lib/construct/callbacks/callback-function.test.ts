/**
 * The callback function as synthesized (lib/construct/callbacks/callback-function.ts): its bundle,
 * sizing, log group and environment, its mapping of the callbacks queue, and a role that allows
 * exactly what its code calls.
 */
import type { CfnResource } from 'aws-cdk-lib';
import { CALLBACK_ENV } from '../../../../../lambdas/kernel/callbacks/names';
import {
  CALLBACK_PROPS,
  arnOf,
  functionPolicyStatements,
  resource,
  synthesize,
  type Synthesized,
} from '../../../helpers';

let s: Synthesized;
beforeAll(() => {
  s = synthesize(CALLBACK_PROPS);
});
const id = (c: { node: { defaultChild?: unknown } }) => s.stack.getLogicalId(c.node.defaultChild as CfnResource);
const callbacks = () => s.stack.pipeline.callbacks!;

test('the function: its bundle, nodejs24.x on arm64, 256 MB, 60 s, its own log group and its targets by secret ARN', () => {
  const fn = resource(s.template, id(callbacks().callbackFunction)).Properties;
  expect(fn).toMatchObject({
    Handler: 'index.handler',
    Runtime: 'nodejs24.x',
    Architectures: ['arm64'],
    MemorySize: 256,
    Timeout: 60,
    LoggingConfig: { LogGroup: { Ref: id(callbacks().logGroup) } },
  });
  const env = fn.Environment.Variables;
  expect(env.NODE_OPTIONS).toBe('--enable-source-maps --max-semi-space-size=8');
  expect(env[CALLBACK_ENV.tableName]).toEqual({ Ref: id(callbacks().table) });
  expect(env[CALLBACK_ENV.queueUrl]).toEqual({ Ref: id(callbacks().queue) });
  expect(env[CALLBACK_ENV.deadLetterQueueUrl]).toEqual({ Ref: id(callbacks().deadLetterQueue) });
  expect(env[CALLBACK_ENV.retryBaseSeconds]).toBe('30');
  expect(env[CALLBACK_ENV.retryWindowSeconds]).toBe('86400');
  expect(env).not.toHaveProperty(CALLBACK_ENV.allowPrivateAddresses);
  const targets = JSON.stringify(env[CALLBACK_ENV.targets]);
  for (const secret of Object.values(callbacks().signingSecrets)) expect(targets).toContain(id(secret));
  expect(targets).toContain('https://billing.example.com/hooks');
  expect(targets).not.toContain('"secret\\"');
  const logs = resource(s.template, id(callbacks().logGroup)).Properties;
  expect(logs.LogGroupName).toBe(s.stack.pipeline.logGroupNames.callbacks);
  expect(logs.KmsKeyId).toEqual(arnOf(id(s.stack.pipeline.logsKey!)));
  // The logs key admits CloudWatch Logs for this group too.
  const key = resource(s.template, id(s.stack.pipeline.logsKey!)).Properties;
  expect(JSON.stringify(key.KeyPolicy)).toContain(`log-group:${s.stack.pipeline.logGroupNames.callbacks}`);
});

test('its mapping of the callbacks queue: batches of 10, partial batch responses, 5 at most at once', () => {
  const mappings = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
    (m) => m.Properties.FunctionName.Ref === id(callbacks().callbackFunction),
  );
  expect(mappings.map((m) => m.Properties)).toEqual([
    expect.objectContaining({
      EventSourceArn: arnOf(id(callbacks().queue)),
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    }),
  ]);
});

test('its role allows exactly: the queue, the DLQ, the table, its secrets, the keys and its logs', () => {
  const statements = functionPolicyStatements(s.template, id(callbacks().callbackFunction));
  const by = (action: string) =>
    statements.filter((st) => st.Effect === 'Allow' && ([] as string[]).concat(st.Action).includes(action));
  const resources = (action: string) => by(action).flatMap((st) => ([] as unknown[]).concat(st.Resource));
  expect(new Set(statements.flatMap((st) => ([] as string[]).concat(st.Action)))).toEqual(
    new Set([
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueUrl',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:SendMessage',
      'kms:Decrypt',
      'kms:GenerateDataKey',
      'kms:DescribeKey',
      'kms:Encrypt',
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      'secretsmanager:GetSecretValue',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]),
  );
  expect(resources('sqs:ReceiveMessage')).toEqual([arnOf(id(callbacks().queue))]);
  expect(resources('sqs:SendMessage')).toEqual([arnOf(id(callbacks().deadLetterQueue))]);
  expect(resources('secretsmanager:GetSecretValue')).toEqual(
    Object.values(callbacks().signingSecrets).map((secret) => ({ Ref: id(secret) })),
  );
  for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem']) {
    expect(resources(action)).toEqual([arnOf(id(callbacks().table))]);
  }
  expect(statements.every((st) => st.Effect === 'Allow')).toBe(true);
});
