#!/usr/bin/env node
/**
 * The CDK app of `cdk synth` and `cdk deploy`: one EmailPipelineStack from cdk.json's context (and
 * `-c` overrides), checked by cdk-nag on every synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import {
  CONTEXT_PREFIX,
  SettingsError,
  settingsFromContext,
  splitContextSettings,
  type ContextSettings,
} from '../lib/settings';
import { principalsFromStrings } from '../lib/construct/email-pipeline';
import { EmailPipelineStack } from '../lib/construct/email-pipeline-stack';

// Environment-agnostic on purpose: no account/region, no lookups, so
// `cdk synth` runs offline and the template deploys to any environment.
const app = new App();

function addPipeline(context: ContextSettings): void {
  const { pipeline, app: options } = splitContextSettings(context);
  new EmailPipelineStack(app, 'EmailPipeline', {
    description: 'SNS -> SQS -> Lambda -> SES v2: exactly-once email effects on at-least-once delivery',
    pipeline: {
      ...pipeline,
      ...(options.publisherPrincipals
        ? { publisherPrincipals: principalsFromStrings(options.publisherPrincipals) }
        : {}),
      ...(options.redrivePrincipals ? { redrivePrincipals: principalsFromStrings(options.redrivePrincipals) } : {}),
      ...(options.cancelPrincipals ? { cancelPrincipals: principalsFromStrings(options.cancelPrincipals) } : {}),
      ...(options.sesTemplateNames ? { sesTemplateNames: options.sesTemplateNames } : {}),
    },
    // Optional: who gets alarm mail (`-c emailPipeline:alarmEmail=oncall@example.com`).
    monitoring: options.alarmEmail ? { alarmEmail: options.alarmEmail } : {},
  });
}

try {
  // Every `emailPipeline:` key is checked: a misspelled one fails the synth.
  addPipeline(settingsFromContext(app.node.getAllContext()));
} catch (error) {
  // A setting error is the operator's to fix: say which and why, without a stack trace.
  if (!(error instanceof SettingsError)) throw error;
  // A team's field (teams.billing.senders[0]) is set through the one key of all teams.
  const setting = error.setting.startsWith('teams.') ? 'teams' : error.setting;
  const key = setting.startsWith(CONTEXT_PREFIX) ? setting : `${CONTEXT_PREFIX}${setting}`;
  process.stderr.write(`${error.message}\nSettings come from cdk.json's "context" and from -c ${key}=VALUE.\n`);
  process.exit(1);
}

// cdk-nag 3.x is a validation plugin: every synth runs the AWS Solutions and
// Serverless checks, and an unacknowledged finding fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
