/**
 * The attachments bucket (contract v1.2): encryption with its own key, TLS only, no public
 * access, objects expiring after the dedupe window; the send function reads only; uploaders are
 * granted by name; and the trust boundary: anyone else can neither read nor write.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  ATTACHMENTS_DELETE_ACTIONS,
  ATTACHMENTS_LIST_ACTIONS,
  attachmentExpiryDays,
} from '../../../../../lib/construct/pipeline/attachments-bucket';
import { arnOf, functionPolicyStatements, synthesize, synthDefault, type Synthesized } from '../../../helpers';

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

/** The conditions on what a request carries (not on who sends it) that the bucket policy uses. */
const REQUEST_CONDITIONS = ['s3:if-none-match', 's3:if-match', 's3:ObjectCreationOperation'];

/**
 * Whether the bucket policy denies `action` to the principal of ARN `principalArn` (as rendered)
 * whatever the request carries (a conditional write's header aside). Only Deny statements for
 * everyone, with an `ArnNotEquals aws:PrincipalArn` exemption, a condition on the request's
 * conditional headers, or none, are in this policy.
 */
function denied(statements: Statement[], action: string, principalArn: string, secure = true): boolean {
  return statements.some((st) => {
    if (st.Effect !== 'Deny' || !asList(st.Action).some((a) => a === action || a === 's3:*')) return false;
    if (st.Condition?.Bool?.['aws:SecureTransport'] === 'false') return !secure;
    if (st.Condition?.NumericLessThan?.['s3:TlsVersion'] !== undefined) return false;
    const keys = Object.values(st.Condition ?? {}).flatMap((c) => Object.keys(c as object));
    if (keys.some((k) => REQUEST_CONDITIONS.includes(k))) return false;
    expect(keys.every((k) => k === 'aws:PrincipalArn')).toBe(true);
    const exempt = asList(st.Condition?.ArnNotEquals?.['aws:PrincipalArn']).map(rendered);
    return !exempt.includes(principalArn);
  });
}

/** The statements that deny `action` to everyone, with no exemption at all. */
function deniedToAll(statements: Statement[], action: string): Statement[] {
  return statements.filter(
    (st) =>
      st.Effect === 'Deny' &&
      st.Principal?.AWS === '*' &&
      st.Condition === undefined &&
      asList(st.Action).includes(action),
  );
}

/** Whether a statement's resources are the bucket itself (not its objects). */
function onTheBucket(s: Synthesized, st: Statement): boolean {
  return rendered(st.Resource) === rendered(arnOf(bucketId(s)));
}

/** A role that uploads, and its ARN as the template renders it. */
function withUploader(): { s: Synthesized; uploaderArn: string } {
  let uploaderArn = '';
  const s = synthesize({}, (stack) => {
    const uploader = new iam.Role(stack, 'Uploader', { assumedBy: new iam.AccountRootPrincipal() });
    stack.pipeline.grantAttachmentUpload(uploader);
    uploaderArn = rendered(Stack.of(stack).resolve(uploader.roleArn));
  });
  return { s, uploaderArn };
}

describe('the attachments bucket', () => {
  test('is encrypted with its own rotating customer-managed key (SSE-KMS, bucket key on)', () => {
    const s = synthDefault();
    const keyId = s.stack.getLogicalId(s.stack.pipeline.attachmentsKey.node.defaultChild as never);
    expect(bucketProps(s).BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
      {
        BucketKeyEnabled: true,
        ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: arnOf(keyId) },
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
    expect(denied(bucketPolicy(s), 's3:PutObject', rendered(arnOf(uploaderId)))).toBe(false);
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
    const role = rendered(arnOf(s.ids.role));
    expect(denied(bucketPolicy(s), 's3:GetObject', role)).toBe(false);
    expect(
      functionPolicyStatements(s.template)
        .flatMap((st) => asList(st.Action))
        .filter((a) => String(a).startsWith('s3:Put')),
    ).toEqual([]);
  });

  test.each(Object.entries(outsiders))('%s can neither list the bucket nor delete an object', (_, arn) => {
    const s = synthDefault();
    const statements = bucketPolicy(s);
    for (const action of ATTACHMENTS_LIST_ACTIONS.bucket) {
      expect(denied(statements, action, arn)).toBe(true);
      expect(deniedToAll(statements, action).every((st) => onTheBucket(s, st))).toBe(true);
    }
    for (const action of [...ATTACHMENTS_LIST_ACTIONS.object, ...ATTACHMENTS_DELETE_ACTIONS]) {
      expect(denied(statements, action, arn)).toBe(true);
    }
  });

  test('listing and deleting are denied to every principal, with no exemption (expiry is S3 lifecycle)', () => {
    const statements = bucketPolicy(synthDefault());
    for (const action of ['s3:ListBucket', 's3:ListBucketVersions', 's3:ListBucketMultipartUploads']) {
      expect(deniedToAll(statements, action)).toHaveLength(1);
    }
    for (const action of ['s3:DeleteObject', 's3:DeleteObjectVersion', 's3:ListMultipartUploadParts']) {
      expect(deniedToAll(statements, action)).toHaveLength(1);
    }
  });

  test('no custom resource empties the bucket, under any removal policy (nothing to exempt)', () => {
    for (const removalPolicy of [RemovalPolicy.RETAIN, RemovalPolicy.DESTROY]) {
      const template = synthesize({ removalPolicy }).template;
      expect(Object.keys(template.findResources('Custom::S3AutoDeleteObjects'))).toEqual([]);
    }
  });

  test('the send function can neither delete nor list: no IAM statement, and the bucket policy denies it', () => {
    const s = synthDefault();
    const role = rendered(arnOf(s.ids.role));
    const statements = bucketPolicy(s);
    for (const action of ['s3:DeleteObject', 's3:DeleteObjectVersion', 's3:ListBucket']) {
      expect(denied(statements, action, role)).toBe(true);
    }
    const sendActions = functionPolicyStatements(s.template).flatMap((st) => asList(st.Action).map(String));
    expect(sendActions.filter((a) => /^s3:(Delete|List)/.test(a) || a === 's3:*')).toEqual([]);
  });

  test('an uploader can neither delete nor list what is there', () => {
    const { s, uploaderArn } = withUploader();
    const statements = bucketPolicy(s);
    for (const action of ['s3:DeleteObject', 's3:ListBucket', 's3:ListBucketMultipartUploads']) {
      expect(denied(statements, action, uploaderArn)).toBe(true);
    }
  });

  test('every write must create (If-None-Match: *): a PutObject or completion without it is denied to all', () => {
    const { s } = withUploader();
    const statements = bucketPolicy(s);
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:PutObject',
          Resource: { 'Fn::Join': ['', [arnOf(bucketId(s)), '/*']] },
          // Multipart parts carry no conditional header (ObjectCreationOperation false): not denied.
          Condition: { Null: { 's3:if-none-match': 'true' }, Bool: { 's3:ObjectCreationOperation': 'true' } },
        }),
        expect.objectContaining({
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:PutObject',
          Condition: { Null: { 's3:if-match': 'false' } },
        }),
      ]),
    );
  });

  test("an outsider cannot abort an uploader's multipart upload", () => {
    const { s, uploaderArn } = withUploader();
    const statements = bucketPolicy(s);
    expect(denied(statements, 's3:AbortMultipartUpload', 'arn:aws:iam::123456789012:role/admin')).toBe(true);
    expect(denied(statements, 's3:AbortMultipartUpload', uploaderArn)).toBe(false);
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
