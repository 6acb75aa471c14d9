#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CONTEXT_PREFIX, SettingsError, settingsFromContext } from '../lib/config';
import { EmailPipelineStack } from '../lib/email-pipeline-stack';

// Environment-agnostic on purpose: no account/region, no lookups, so
// `cdk synth` runs offline and the template deploys to any environment.
const app = new App();
const settings = settingsFromContext((key) => app.node.tryGetContext(key));
// Optional: who gets alarm mail (`-c emailPipeline:alarmEmail=oncall@example.com`).
const alarmEmail: unknown = app.node.tryGetContext(`${CONTEXT_PREFIX}alarmEmail`);
if (alarmEmail !== undefined && typeof alarmEmail !== 'string') {
  throw new SettingsError(`${CONTEXT_PREFIX}alarmEmail`, alarmEmail, 'must be a string');
}

new EmailPipelineStack(app, 'EmailPipeline', {
  description: 'SNS -> SQS -> Lambda -> SES v2: exactly-once email effects on at-least-once delivery',
  pipeline: settings,
  monitoring: alarmEmail ? { alarmEmail } : {},
});

// cdk-nag 3.x is a validation plugin: every synth runs the AWS Solutions checks,
// and an unacknowledged finding fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
