/**
 * The attachments bucket (contract v1.2): encryption with its own key, TLS only, no public
 * access, objects expiring after the dedupe window; the send function reads only; uploaders are
 * granted by name; and the trust boundary: anyone else can neither read nor write.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { attachmentExpiryDays } from '../../lib/construct/pipeline/attachments-bucket';
import { functionPolicyStatements, synthesize, synthDefault, type Synthesized } from './helpers';

type Statement = Record<string, any>;

function bucketId(s: Synthesized): string {
  return s.stack.getLogicalId(s.stack.pipeline.attachmentsBucket.node.defaultChild as never);
}

function bucketProps(s: Synthesized): Record<string, any> {
  return s.template.toJSON().Resources[bucketId(s)].Properties;
}

function bucketPolicy(s: Synthesized): Statement[] {
  const policies = Object.values(s.template.findResources('AWS::S3::BucketPolicy')).filter(
    (p) => p.Properties.Bucket?.Ref === bucketId(s),
  );
  expect(policies).toHaveLength(1);
  return policies[0].Properties.PolicyDocument.Statement;
}

/** A CloudFormation value as text (intrinsics included), to compare and search. */
const rendered = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/**
 * Whether the bucket policy denies `action` on an object to the principal of ARN `principalArn` (as
 * rendered). Only Deny statements for everyone with an `ArnNotEquals aws:PrincipalArn` exemption,
 * or none, are in this policy; anything else fails the test.
 */
function denied(statements: Statement[], action: string, principalArn: string, secure = true): boolean {
  return statements.some((st) => {
    if (st.Effect !== 'Deny' || !asList(st.Action).some((a) => a === action || a === 's3:*')) return false;
    if (st.Condition?.Bool?.['aws:SecureTransport'] === 'false') return !secure;
    if (st.Condition?.NumericLessThan?.['s3:TlsVersion'] !== undefined) return false;
    const exempt = asList(st.Condition?.ArnNotEquals?.['aws:PrincipalArn']).map(rendered);
    return !exempt.includes(principalArn);
  });
}

describe('the attachments bucket', () => {
  test('is encrypted with its own rotating customer-managed key (SSE-KMS, bucket key on)', () => {
    const s = synthDefault();
    const keyId = s.stack.getLogicalId(s.stack.pipeline.attachmentsKey.node.defaultChild as never);
    expect(bucketProps(s).BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      {
        BucketKeyEnabled: true,
        ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } },
      },
    ]);
    expect(s.template.toJSON().Resources[keyId].Properties.EnableKeyRotation).toBe(true);
  });

  test('blocks every kind of public access and owns its objects', () => {
    const props = bucketProps(synthDefault());
    expect(props.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(props.OwnershipControls.Rules).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
  });

  test('refuses requests without TLS, and TLS before 1.2', () => {
    const statements = bucketPolicy(synthDefault());
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
        }),
      ]),
    );
  });

  test('expires objects after the dedupe window (in whole days), and stale multipart uploads after a day', () => {
    const s = synthDefault();
    const days = attachmentExpiryDays(s.stack.pipeline.settings.dedupeWindowSeconds);
    expect(days * 86_400).toBeGreaterThanOrEqual(s.stack.pipeline.settings.dedupeWindowSeconds);
    expect(bucketProps(s).LifecycleConfiguration.Rules).toEqual([
      {
        Id: 'ExpireAfterDedupeWindow',
        Status: 'Enabled',
        ExpirationInDays: days,
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      },
    ]);
  });

  test('a longer dedupe window keeps objects longer', () => {
    expect(attachmentExpiryDays(86_400)).toBe(1);
    expect(attachmentExpiryDays(86_401)).toBe(2);
    expect(attachmentExpiryDays(14 * 86_400)).toBe(14);
  });

  test('its name is a stack output and reaches the send function', () => {
    const s = synthDefault();
    expect(s.template.toJSON().Outputs.AttachmentsBucketName.Value).toEqual({ Ref: bucketId(s) });
    const env = s.template.toJSON().Resources[s.ids.function].Properties.Environment.Variables;
    expect(env.ATTACHMENTS_BUCKET_NAME).toEqual({ Ref: bucketId(s) });
  });
});

describe('who may use it', () => {
  test('the send function may only read objects: s3:GetObject, and the key through S3 only', () => {
    const s = synthDefault();
    const onBucket = functionPolicyStatements(s.template).filter((st) => rendered(st.Resource).includes(bucketId(s)));
    expect(onBucket).toEqual([
      expect.objectContaining({ Sid: 'ReadAttachments', Action: 's3:GetObject', Effect: 'Allow' }),
    ]);
    expect(rendered(onBucket[0]?.Resource)).toContain(`"/*"`); // objects, not the bucket (no listing)
    const keyId = s.stack.getLogicalId(s.stack.pipeline.attachmentsKey.node.defaultChild as never);
    const onKey = functionPolicyStatements(s.template).filter((st) => rendered(st.Resource).includes(keyId));
    expect(onKey).toEqual([
      expect.objectContaining({
        Sid: 'DecryptAttachments',
        Action: 'kms:Decrypt',
        Condition: {
          StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
        },
      }),
    ]);
  });

  test('grantAttachmentUpload lets a role put objects (and encrypt with the key), and exempts it by ARN', () => {
    let uploader!: iam.Role;
    const s = synthesize({}, (stack) => {
      uploader = new iam.Role(stack, 'Uploader', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantAttachmentUpload(uploader);
    });
    const uploaderId = s.stack.getLogicalId(uploader.node.defaultChild as never);
    const policies = Object.values(s.template.findResources('AWS::IAM::Policy')).filter((p) =>
      rendered(p.Properties.Roles).includes(uploaderId),
    );
    const statements: Statement[] = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.flatMap((st) => asList(st.Action))).toEqual(
      expect.arrayContaining(['s3:PutObject', 'kms:GenerateDataKey*']),
    );
    expect(statements.flatMap((st) => asList(st.Action))).not.toContain('s3:GetObject');
    expect(denied(bucketPolicy(s), 's3:PutObject', rendered({ 'Fn::GetAtt': [uploaderId, 'Arn'] }))).toBe(false);
  });

  test('an account is refused as an uploader: the bucket policy names principals', () => {
    expect(() =>
      synthesize({}, (stack) => stack.pipeline.grantAttachmentUpload(new iam.AccountPrincipal('111122223333'))),
    ).toThrow(/role or a user/);
  });
});

describe('the trust boundary', () => {
  const outsiders = {
    'a role of another account': 'arn:aws:iam::999999999999:role/outsider',
    'another role of this account': 'arn:aws:iam::123456789012:role/admin',
  };

  test.each(Object.entries(outsiders))(
    '%s can neither read nor write objects, whatever its IAM policies say',
    (_, arn) => {
      const statements = bucketPolicy(synthDefault());
      expect(denied(statements, 's3:GetObject', arn)).toBe(true);
      expect(denied(statements, 's3:PutObject', arn)).toBe(true);
    },
  );

  test('the bucket policy allows no one: access comes only from the grants above', () => {
    expect(bucketPolicy(synthDefault()).filter((st) => st.Effect === 'Allow')).toEqual([]);
  });

  test('the send function reads, but cannot write even with an IAM statement of its own', () => {
    const s = synthDefault();
    const role = rendered({ 'Fn::GetAtt': [s.ids.role, 'Arn'] });
    expect(denied(bucketPolicy(s), 's3:GetObject', role)).toBe(false);
    expect(
      functionPolicyStatements(s.template)
        .flatMap((st) => asList(st.Action))
        .filter((a) => String(a).startsWith('s3:Put')),
    ).toEqual([]);
  });

  test('an uploader cannot read what it uploaded', () => {
    let uploaderArn = '';
    const s = synthesize({}, (stack) => {
      const uploader = new iam.Role(stack, 'Uploader', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantAttachmentUpload(uploader);
      uploaderArn = rendered(Stack.of(stack).resolve(uploader.roleArn));
    });
    expect(denied(bucketPolicy(s), 's3:GetObject', uploaderArn)).toBe(true);
  });
});
