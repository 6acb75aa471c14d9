/**
 * The construct as a platform engineer uses it: inside their own stack, several to a stack,
 * and publishers granted after construction; their settings from the app's CDK context are in
 * context-props.test.ts.
 */
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { EmailPipeline, type EmailPipelineProps } from '../../../../../lib/construct/email-pipeline';
import { EmailPipelineMonitoring } from '../../../../../lib/construct/monitoring/monitoring';
import { PIPELINE_ENDPOINTS } from '../../../../../lib/construct/pipeline/endpoints';
import { BASE_PROPS, userStack } from '../../../helpers';

/** The outputs whose value is an endpoints object, parsed as the CLI parses them (tokens left as objects). */
function endpointsOutputs(template: Template): Array<Record<string, unknown>> {
  return Object.values(template.findOutputs('*'))
    .map((o) => o.Value as unknown)
    .flatMap((value) => {
      // Stack.toJsonString renders as Fn::Join over literal JSON pieces and tokens.
      const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
      if (!join) return [];
      // Every token sits inside a JSON string: a placeholder keeps the text valid JSON.
      const text = join[1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
      return [JSON.parse(text) as Record<string, unknown>];
    });
}

describe('two pipelines in one user stack', () => {
  const { stack } = userStack();
  const billing = new EmailPipeline(stack, 'Billing', { ...BASE_PROPS, senderAddress: 'billing@example.com' });
  const security = new EmailPipeline(stack, 'Security', {
    ...BASE_PROPS,
    senderAddress: 'security@example.com',
    idempotencyKeyPrefix: 'security',
  });
  new EmailPipelineMonitoring(stack, 'BillingMonitoring', { pipeline: billing });
  const template = Template.fromStack(stack);
  const parsed = endpointsOutputs(template);

  test('each pipeline emits one endpoints output that names it by its path in the stack', () => {
    const pipelines = parsed.filter((o) => typeof o.emailPipeline === 'string');
    expect(pipelines.map((o) => o.emailPipeline).sort()).toEqual(['Billing', 'Security']);
    expect(billing.pathInStack).toBe('Billing');
    expect(security.pathInStack).toBe('Security');
    for (const pipeline of pipelines) {
      expect(pipeline.v).toBe(1);
      for (const endpoint of PIPELINE_ENDPOINTS) expect(pipeline).toHaveProperty(endpoint.name);
    }
  });

  test('the key prefix in each output is that pipeline’s own', () => {
    const byName = Object.fromEntries(parsed.map((o) => [o.emailPipeline ?? o.emailPipelineMonitoring, o]));
    expect(byName.Security?.IdempotencyKeyPrefix).toBe('security');
    expect(byName.Billing?.IdempotencyKeyPrefix).not.toBe('security');
  });

  test('the monitoring emits its own output, naming the pipeline it watches', () => {
    const monitoring = parsed.filter((o) => o.emailPipelineMonitoring !== undefined);
    expect(monitoring).toHaveLength(1);
    expect(monitoring[0]).toMatchObject({ emailPipelineMonitoring: 'Billing', v: 1 });
    expect(monitoring[0]).toHaveProperty('AlarmTopicArn');
    expect(monitoring[0]).toHaveProperty('AlarmNamePrefix');
  });

  test('a pipeline nested in a construct is named by its whole path in the stack', () => {
    const { stack: other } = userStack();
    const nested = new EmailPipeline(new Construct(other, 'Platform'), 'Mail', BASE_PROPS);
    expect(nested.pathInStack).toBe('Platform/Mail');
  });
});

describe('grantPublish', () => {
  function denyStatement(props: Partial<EmailPipelineProps>, grant?: iam.IPrincipal) {
    const { stack } = userStack();
    const pipeline = new EmailPipeline(stack, 'Mail', { ...BASE_PROPS, ...props });
    if (grant) pipeline.grantPublish(grant);
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::SNS::TopicPolicy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>,
    );
    return statements;
  }

  test('a role granted after construction is exempt from the publishers’ Deny and allowed to publish', () => {
    const role = 'arn:aws:iam::111122223333:role/orders';
    const statements = denyStatement({}, new iam.ArnPrincipal(role));
    const deny = statements.find((s) => s.Sid === 'OnlyConfiguredPublishers');
    expect(deny?.Condition.ArnNotEquals['aws:PrincipalArn']).toEqual([role]);
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Allow', Action: 'sns:Publish', Principal: { AWS: role } }),
      ]),
    );
  });

  test('without the grant the role is not exempt', () => {
    const deny = denyStatement({}).find((s) => s.Sid === 'OnlyConfiguredPublishers');
    expect(deny?.Condition.ArnNotEquals).toBeUndefined();
  });

  test('an account granted later joins the accounts the Deny exempts', () => {
    const statements = denyStatement(
      { publisherPrincipals: [new iam.AccountPrincipal('111122223333')] },
      new iam.AccountPrincipal('444455556666'),
    );
    const deny = statements.find((s) => s.Sid === 'OnlyConfiguredPublishers');
    expect(deny?.Condition.StringNotEquals['aws:PrincipalAccount']).toEqual(['111122223333', '444455556666']);
  });
});
