import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { CALLBACK_PROPS, build } from './helpers';

/** Findings in the validation report of an app, by plugin. */
function findings(app: App): Array<{ plugin: string; rule: string; resources: string[] }> {
  const report = JSON.parse(fs.readFileSync(path.join(app.outdir, 'validation-report.json'), 'utf8'));
  return report.pluginReports.flatMap(
    (r: { pluginName?: string; summary?: { pluginName?: string }; violations?: any[] }) =>
      (r.violations ?? []).map((v) => ({
        plugin: r.pluginName ?? r.summary?.pluginName ?? '?',
        rule: v.ruleName,
        resources: (v.violatingResources ?? []).map(
          (x: { constructPath?: string; resourceLogicalId?: string }) => x.constructPath ?? x.resourceLogicalId ?? '?',
        ),
      })),
  );
}

/** A pipeline whose operators are listed: nobody may assume its redrive role otherwise, and the synth warns. */
const OPERATORS = { redrivePrincipals: [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/oncall')] };

describe('cdk-nag AwsSolutions and Serverless checks', () => {
  test('report no unacknowledged finding (errors or warnings) with redrive principals listed', () => {
    const { app } = build(OPERATORS, undefined, { nag: true });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test('with teams (a team topic each, a high-priority one), no unacknowledged finding either', () => {
    const teams = {
      billing: { senders: ['billing@example.com'], publishers: ['arn:aws:iam::123456789012:role/billing'] },
      security: { senders: ['security@example.com'], highPriority: true },
    };
    const { app } = build({ ...OPERATORS, teams }, undefined, { nag: true });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test('with a team’s SES tenant (its status rules, log group and logs policy), no unacknowledged finding either', () => {
    const teams = { security: { senders: ['security@example.com'], sesTenant: true } };
    const { app } = build({ ...OPERATORS, teams }, undefined, { nag: true });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test.each([
    ['customer-managed keys', {}],
    ['AWS-managed table key and logs unencrypted', { customerManagedTableKey: false, encryptLogs: false }],
  ])('with callbacks (the pipeline’s and a team’s), %s: no unacknowledged finding either', (_, keys) => {
    const { app } = build({ ...OPERATORS, ...CALLBACK_PROPS, ...keys }, undefined, { nag: true });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test('with the default props, the one finding is the warning that nobody may assume the redrive role', () => {
    const { app } = build({}, undefined, { nag: true });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([
      { plugin: 'Construct Annotations', rule: 'Annotation::exactly-once-email:redriveRoleUnassumable', resources: [] },
    ]);
  });

  test('report no unacknowledged finding with an alarm email subscribed', () => {
    const { app } = build(OPERATORS, undefined, { nag: true, monitoring: { alarmEmail: 'oncall@example.com' } });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test('report no unacknowledged finding with the reputation pause on and both topics subscribed', () => {
    const { app } = build(OPERATORS, undefined, {
      nag: true,
      monitoring: {
        alarmEmail: 'oncall@example.com',
        warningEmail: 'team@example.com',
        pauseSendingOnReputation: true,
      },
    });
    expect(() => app.synth()).not.toThrow();
    expect(findings(app)).toEqual([]);
  });

  test('are live: a key without rotation is reported', () => {
    const { app } = build(
      {},
      (stack) => {
        (stack.pipeline.queueKey.node.defaultChild as kms.CfnKey).enableKeyRotation = false;
      },
      { nag: true },
    );
    expect(() => app.synth()).toThrow(/AwsSolutions-KMS5/);
  });

  test('are live: a subscription without a redrive policy is reported by the Serverless pack', () => {
    const { app } = build(
      {},
      (stack) => {
        for (const c of stack.node.findAll()) {
          if (c instanceof sns.CfnSubscription) c.redrivePolicy = undefined;
        }
      },
      { nag: true },
    );
    expect(() => app.synth()).toThrow(/Serverless-SNSRedrivePolicy/);
  });

  test('every acknowledgement carries a reason a reviewer can judge', () => {
    const { app } = build({}, undefined, { nag: true });
    // Validations.acknowledge records { [ruleId]: reason } on the construct.
    const acks = app.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(acks.map(([id]) => id).sort()).toEqual(
      [
        'AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:template/*]',
        // The send function reads the attachment objects messages name (GetObject on <bucket>/*, no listing).
        'AwsSolutions::AwsSolutions-IAM5[Resource::<PipelineAttachmentsBucket979827C4.Arn>/*]',
        // The attachments bucket keeps no access logs (its objects live for the dedupe window).
        'AwsSolutions::AwsSolutions-S1',
        // The subscription's DLQ is a DLQ (SNS redrive), which AwsSolutions does not recognise.
        'AwsSolutions::AwsSolutions-SQS3',
        // The three DLQs (work queue, subscription, ledger buffer): no DLQ of a DLQ.
        ...Array<string>(3).fill('Serverless::Serverless-SQSRedrivePolicy'),
        // Send, schedule, ledger, status and cancel functions are invoked synchronously (SQS mapping, function URL).
        ...Array<string>(5).fill('Serverless::Serverless-LambdaDLQ'),
        ...Array<string>(5).fill('Serverless::Serverless-LambdaTracing'),
        // The five SQS mappings (work queue, high-priority queue, schedule queue, ledger buffer: the queue's redrive
        // policy is the failure path; the ledger DLQ, enabled only to redrive it: a failed event stays in that DLQ).
        ...Array<string>(5).fill('Serverless::Serverless-LambdaEventSourceMappingDestination'),
      ].sort(),
    );
    for (const [, reason] of acks) expect(reason.length).toBeGreaterThan(80);
  });
});
