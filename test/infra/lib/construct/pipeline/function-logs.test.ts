/** The functions' log groups: their retention, their key and who may read them. */
import { CfnResource, Stack } from 'aws-cdk-lib';
import { arnOf, rendered, resource, synthDefault, synthesize } from '../../../helpers';

type Statement = Record<string, any>;

describe('function logs', () => {
  test('are encrypted with a customer-managed key with rotation by default', () => {
    const s = synthDefault();
    const keyId = Stack.of(s.stack).getLogicalId(s.stack.pipeline.logsKey?.node.defaultChild as CfnResource);
    expect(resource(s.template, s.ids.logGroup).Properties.KmsKeyId).toEqual(arnOf(keyId));
    const key = resource(s.template, keyId).Properties;
    expect(key.EnableKeyRotation).toBe(true);
    const grant = (key.KeyPolicy.Statement as Statement[]).find((st) => st.Sid === 'CloudWatchLogsUseKey');
    expect(grant?.Principal).toEqual({
      Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
    });
    expect(Object.keys(grant?.Condition ?? {})).toEqual(['ArnEquals']);
  });

  test("CloudWatch Logs may use the key for the pipeline's three log groups only, by their ARNs", () => {
    const s = synthDefault();
    const keyId = Stack.of(s.stack).getLogicalId(s.stack.pipeline.logsKey?.node.defaultChild as CfnResource);
    const grant = (resource(s.template, keyId).Properties.KeyPolicy.Statement as Statement[]).find(
      (st) => st.Sid === 'CloudWatchLogsUseKey',
    );
    const allowed = (grant?.Condition.ArnEquals['kms:EncryptionContext:aws:logs:arn'] as unknown[]).map(rendered);
    const logGroupArn = (name: string) => `arn:{AWS::Partition}:logs:{AWS::Region}:{AWS::AccountId}:log-group:${name}`;
    const names = Object.values(s.template.findResources('AWS::Logs::LogGroup')).map(
      (g) => g.Properties.LogGroupName as string,
    );
    expect(names).toHaveLength(3);
    expect(allowed.sort()).toEqual(names.map(logGroupArn).sort());
    // Another log group of the account, even one under the same prefix, is not covered.
    expect(allowed).not.toContain(logGroupArn('/aws/lambda/other'));
    expect(allowed).not.toContain(logGroupArn(`${s.stack.pipeline.logGroupNames.send}-copy`));
    expect(allowed.some((arn) => arn.includes('*'))).toBe(false);
  });

  test('the log groups have fixed names under one prefix per pipeline (the key names them)', () => {
    const s = synthDefault();
    const { send, ledger, status } = s.stack.pipeline.logGroupNames;
    expect(send).toMatch(/^\/email-pipeline\/EmailPipeline-[0-9A-F]{8}\/send-email$/);
    expect(ledger).toBe(send.replace(/send-email$/, 'ledger'));
    expect(status).toBe(send.replace(/send-email$/, 'status'));
    expect(resource(s.template, s.ids.logGroup).Properties.LogGroupName).toBe(send);
  });

  test('every log group of the pipeline (send, ledger and status functions) uses that key', () => {
    const s = synthDefault();
    const keyId = Stack.of(s.stack).getLogicalId(s.stack.pipeline.logsKey?.node.defaultChild as CfnResource);
    const groups = Object.values(s.template.findResources('AWS::Logs::LogGroup'));
    expect(groups.length).toBeGreaterThanOrEqual(3);
    expect(groups.map((g) => g.Properties.KmsKeyId)).toEqual(groups.map(() => arnOf(keyId)));
  });

  test('encryptLogs=false leaves the default encryption and creates no key', () => {
    const s = synthesize({ encryptLogs: false });
    expect(resource(s.template, s.ids.logGroup).Properties.KmsKeyId).toBeUndefined();
    for (const group of Object.values(s.template.findResources('AWS::Logs::LogGroup'))) {
      expect(group.Properties.KmsKeyId).toBeUndefined();
    }
    expect(s.stack.pipeline.logsKey).toBeUndefined();
  });
});
