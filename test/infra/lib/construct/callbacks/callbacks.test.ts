/**
 * The callbacks as the pipeline composes them (lib/construct/callbacks/callbacks.ts): nothing of
 * them without a callback; with callbacks, the redrive role's reach and the `Endpoints` output's
 * `Callbacks` and teams' secrets. Their parts: resources.test.ts, callback-function.test.ts.
 */
import type { CfnResource } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { CALLBACK_ENV } from '../../../../../lambdas/kernel/callbacks/names';
import {
  CALLBACK_PROPS,
  arnOf,
  functionPolicyStatements,
  resource,
  synthDefault,
  synthesize,
  type Synthesized,
} from '../../../helpers';

const id = (s: Synthesized, c: { node: { defaultChild?: unknown } }) =>
  s.stack.getLogicalId(c.node.defaultChild as CfnResource);

/** The pipeline's `Endpoints` output as JSON, each Ref as `ref:<id>` and each GetAtt as `att:<id>.<attribute>`. */
function endpoints(template: Template): Record<string, any> {
  const [output] = Object.entries(template.findOutputs('*'))
    .filter(([name]) => name.startsWith('PipelineEndpoints'))
    .map(([, o]) => o);
  const join = (output?.Value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const text = join[1]
    .map((part: any) =>
      typeof part === 'string' ? part : part.Ref ? `ref:${part.Ref}` : `att:${part['Fn::GetAtt'].join('.')}`,
    )
    .join('');
  return JSON.parse(text) as Record<string, any>;
}

describe('without a callback', () => {
  test('nothing of the callbacks is made: no secret, table, queue, function or output of theirs', () => {
    const s = synthDefault();
    expect(s.stack.pipeline.callbacks).toBeUndefined();
    expect(s.template.findResources('AWS::SecretsManager::Secret')).toEqual({});
    expect(Object.keys(s.template.toJSON().Resources).filter((k) => /Callback/i.test(k))).toEqual([]);
    const functions = Object.values(s.template.findResources('AWS::Lambda::Function'));
    expect(functions.some((f) => f.Properties.Environment?.Variables?.[CALLBACK_ENV.targets] !== undefined)).toBe(
      false,
    );
    expect(endpoints(s.template)).not.toHaveProperty('Callbacks');
    expect(s.stack.pipeline.logGroupNames).not.toHaveProperty('callbacks');
  });
});

describe('with callbacks', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(CALLBACK_PROPS);
  });
  const callbacks = () => s.stack.pipeline.callbacks!;

  test('the redrive role may list, redrive and purge the callbacks DLQ, send to the callbacks queue and read its history', () => {
    const role = id(s, s.stack.pipeline.redriveRole);
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy'))
      .filter((p) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    const sid = (name: string) => statements.find((st) => st.Sid === name);
    expect(sid('ListRedrivePurgeCallbackDeadLetters')?.Resource).toEqual(arnOf(id(s, callbacks().deadLetterQueue)));
    expect(sid('ListRedrivePurgeCallbackDeadLetters')?.Action).toContain('sqs:StartMessageMoveTask');
    expect(sid('RedriveToTheCallbacksQueue')).toMatchObject({
      Action: ['sqs:GetQueueAttributes', 'sqs:SendMessage'],
      Resource: arnOf(id(s, callbacks().queue)),
    });
    expect(sid('ReadAndWriteCallbackMessages')?.Resource).toEqual(arnOf(id(s, callbacks().queueKey)));
    // callbacks list --history and replay read the table and its index; enable deletes a team's state.
    const tableArn = arnOf(id(s, callbacks().table));
    expect(sid('CallbackHistoryAndState')).toMatchObject({
      Action: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
      Resource: [tableArn, { 'Fn::Join': ['', [tableArn, '/index/by-day']] }],
    });
    expect(sid('UseCallbacksTableKey')?.Condition).toEqual({
      StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
    });
  });

  test('the send function tells the callbacks queue of the keys it dead-letters: its environment, the queue and its key', () => {
    const p = s.stack.pipeline;
    const env = resource(s.template, id(s, p.sendFunction)).Properties.Environment.Variables;
    expect(env[CALLBACK_ENV.queueUrl]).toEqual({ Ref: id(s, callbacks().queue) });
    expect(env[CALLBACK_ENV.targetNames]).toBe('*,billing');
    const statements = functionPolicyStatements(s.template);
    const sid = (name: string) => statements.find((st) => st.Sid === name);
    expect(sid('TellCallbacksOfDeadLetters')).toMatchObject({
      Action: 'sqs:SendMessage',
      Resource: arnOf(id(s, callbacks().queue)),
    });
    expect(sid('EncryptDeadLetterNotices')?.Resource).toEqual(arnOf(id(s, callbacks().queueKey)));
    // Without callbacks, neither.
    const plain = resource(synthDefault().template, id(synthDefault(), synthDefault().stack.pipeline.sendFunction));
    expect(plain.Properties.Environment.Variables).not.toHaveProperty(CALLBACK_ENV.queueUrl);
  });

  test('Endpoints: Callbacks with the queue, DLQ, table, function, log group and the pipeline’s secret; a team’s secret in Teams', () => {
    const values = endpoints(s.template);
    expect(values.Callbacks).toEqual({
      QueueUrl: `ref:${id(s, callbacks().queue)}`,
      DeadLetterQueueUrl: `ref:${id(s, callbacks().deadLetterQueue)}`,
      TableName: `ref:${id(s, callbacks().table)}`,
      FunctionName: `ref:${id(s, callbacks().callbackFunction)}`,
      LogGroupName: s.stack.pipeline.logGroupNames.callbacks,
      SigningSecretArn: `ref:${id(s, callbacks().signingSecrets['*']!)}`,
    });
    expect(values.Teams.billing.CallbackSigningSecretArn).toBe(`ref:${id(s, callbacks().signingSecrets.billing!)}`);
    expect(values.Teams.support).not.toHaveProperty('CallbackSigningSecretArn');
  });

  test('a team’s callback alone: no SigningSecretArn of the pipeline’s own', () => {
    const teamOnly = synthesize({ teams: CALLBACK_PROPS.teams });
    const values = endpoints(teamOnly.template);
    expect(values.Callbacks).not.toHaveProperty('SigningSecretArn');
    expect(values.Teams.billing).toHaveProperty('CallbackSigningSecretArn');
    expect(teamOnly.template.findResources('AWS::SecretsManager::Secret')).not.toEqual({});
    const subscription = Object.values(teamOnly.template.findResources('AWS::SNS::Subscription')).filter(
      (r) => r.Properties.RawMessageDelivery === true,
    );
    expect(subscription.map((r) => r.Properties.FilterPolicy)).toEqual([{ team: ['billing'] }]);
  });
});
