/** Settings from the CDK context of the user's own app: EmailPipeline.propsFromContext, and the context checked by every pipeline. */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { EmailPipeline } from '../../../../../lib/construct/email-pipeline';
import { EmailPipelineMonitoring } from '../../../../../lib/construct/monitoring/monitoring';
import { SettingsError } from '../../../../../lib/settings';
import { BASE_PROPS, userStack } from '../../../helpers';

describe('settings from the user app’s context', () => {
  const context = {
    'emailPipeline:senderAddress': 'ops@example.com',
    'emailPipeline:sesIdentity': 'example.com',
    'emailPipeline:maxSendRate': '50',
    'emailPipeline:publisherPrincipals': '111122223333',
  };

  test('propsFromContext reads every emailPipeline: key, coerced and checked', () => {
    const { stack } = userStack(context);
    const props = EmailPipeline.propsFromContext(stack);
    expect(props.maxSendRate).toBe(50);
    expect(props.senderAddress).toBe('ops@example.com');
    expect(props.publisherPrincipals?.map((p) => (p as iam.AccountPrincipal).accountId)).toEqual(['111122223333']);
    const pipeline = new EmailPipeline(stack, 'Mail', props);
    expect(pipeline.settings.maxSendRate).toBe(50);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('contextNotApplied'));
  });

  test('a misspelled key fails the synth, naming the closest known one', () => {
    const { stack } = userStack({ ...context, 'emailPipeline:senderAdress': 'x@y.z' });
    expect(() => new EmailPipeline(stack, 'Mail', BASE_PROPS)).toThrow(SettingsError);
    expect(() => EmailPipeline.propsFromContext(stack)).toThrow(/did you mean emailPipeline:senderAddress/);
  });

  test('a known key the props do not carry is reported, not silently ignored', () => {
    const { stack } = userStack(context);
    new EmailPipeline(stack, 'Mail', BASE_PROPS);
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.anyValue());
    const text = warnings.map((w) => String(w.entry.data)).join('\n');
    expect(text).toContain('emailPipeline:maxSendRate');
    expect(text).toContain('emailPipeline:publisherPrincipals');
    expect(text).toContain('propsFromContext');
  });

  test('a key set to what the props already resolve to is not reported', () => {
    const { stack } = userStack({ 'emailPipeline:maxSendRate': 14 });
    new EmailPipeline(stack, 'Mail', BASE_PROPS);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('contextNotApplied'));
  });

  test('the monitoring reports an alarmEmail in context that its props do not carry', () => {
    const { stack } = userStack({ 'emailPipeline:alarmEmail': 'oncall@example.com' });
    const pipeline = new EmailPipeline(stack, 'Mail', BASE_PROPS);
    new EmailPipelineMonitoring(stack, 'Monitoring', { pipeline });
    const text = Annotations.fromStack(stack)
      .findWarning('*', Match.anyValue())
      .map((w) => String(w.entry.data))
      .join('\n');
    expect(text).toContain('emailPipeline:alarmEmail');
    expect(text).not.toContain('emailPipeline:senderAddress');
  });
});

describe('teams from context', () => {
  const teams = { billing: { senders: ['billing@example.com'], rateSharePercent: 50 } };
  const context = {
    'emailPipeline:senderAddress': 'ops@example.com',
    'emailPipeline:sesIdentity': 'example.com',
    'emailPipeline:teams': teams,
  };

  test('propsFromContext carries them, and the pipeline applying them is not told they were not applied', () => {
    const { stack } = userStack(context);
    const props = EmailPipeline.propsFromContext(stack);
    expect(props.teams).toEqual(teams);
    const pipeline = new EmailPipeline(stack, 'Mail', props);
    expect(pipeline.settings.teams?.billing?.senders).toEqual(['billing@example.com']);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('contextNotApplied'));
  });

  test('teams in context that the props do not carry are reported', () => {
    const { stack } = userStack(context);
    new EmailPipeline(stack, 'Mail', { ...BASE_PROPS, senderAddress: 'ops@example.com' });
    const text = Annotations.fromStack(stack)
      .findWarning('*', Match.anyValue())
      .map((w) => String(w.entry.data))
      .join('\n');
    expect(text).toContain('emailPipeline:teams');
  });
});
