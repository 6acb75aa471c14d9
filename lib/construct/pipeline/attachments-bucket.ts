/**
 * The attachments bucket (contract v1.2: files sent by `s3Key`, which an SNS message cannot
 * carry): its own customer-managed key, TLS only, no public access, objects expiring after the
 * dedupe window. Its policy lets only the send function read objects and only the principals given
 * `grantAttachmentUpload` write them; the send function's own statement is read only
 * (s3:GetObject, and the key's Decrypt through S3). Nobody lists the bucket or deletes from it,
 * and nobody replaces an object: a write must carry `If-None-Match: *`.
 */
import { Duration, Lazy, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../../settings';
import { rotatingKey } from '../common/keys';
import { principalArn } from './principals';

const DAY_SECONDS = 24 * 60 * 60;

/** The listing actions the bucket policy denies to every principal: on the bucket, and on an object's parts. */
export const ATTACHMENTS_LIST_ACTIONS = {
  bucket: ['s3:ListBucket', 's3:ListBucketVersions', 's3:ListBucketMultipartUploads'],
  object: ['s3:ListMultipartUploadParts'],
} as const;

/** The deleting actions the bucket policy denies to every principal. */
export const ATTACHMENTS_DELETE_ACTIONS = ['s3:DeleteObject', 's3:DeleteObjectVersion'] as const;

/** What {@link buildAttachmentsBucket} made. */
export interface AttachmentsBucket {
  readonly bucket: s3.Bucket;
  /** Customer-managed key (rotation on) of the bucket's objects. */
  readonly key: kms.Key;
  /**
   * Restricts the bucket to its readers and writers: call once, with the send function's role.
   * Returns what grants an uploader (EmailPipeline.grantAttachmentUpload): the whole bucket, or
   * with a `team`, that team's prefix `<team>/` only.
   */
  restrict(sendRole: iam.IRole): (grantee: iam.IGrantable, team?: string) => iam.Grant;
}

/**
 * Days an object is kept: the dedupe window, in whole days (S3 expires at the next midnight UTC
 * after that), so an object outlives every copy of the message that names it (published after
 * the upload) still inside the window.
 */
export function attachmentExpiryDays(dedupeWindowSeconds: number): number {
  return Math.max(1, Math.ceil(dedupeWindowSeconds / DAY_SECONDS));
}

/** The key and the bucket, in `scope` (the pipeline). */
export function buildAttachmentsBucket(
  scope: Construct,
  props: { readonly settings: ResolvedSettings; readonly removalPolicy: RemovalPolicy },
): AttachmentsBucket {
  const key = rotatingKey(scope, 'AttachmentsKey', 'Encrypts the email pipeline attachments', props.removalPolicy);
  const bucket = new s3.Bucket(scope, 'AttachmentsBucket', {
    encryption: s3.BucketEncryption.KMS,
    encryptionKey: key,
    bucketKeyEnabled: true,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: false,
    removalPolicy: props.removalPolicy,
    lifecycleRules: [
      {
        id: 'ExpireAfterDedupeWindow',
        expiration: Duration.days(attachmentExpiryDays(props.settings.dedupeWindowSeconds)),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
  });
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions::AwsSolutions-S1',
    reason:
      'Objects live for the dedupe window only and the bucket policy lets only the send function read them; ' +
      'access is audited with CloudTrail data events where wanted, not a second bucket of logs',
  });

  const uploaders: string[] = [];
  return {
    bucket,
    key,
    restrict(sendRole) {
      const stack = Stack.of(bucket);
      // Read only: objects by key, no listing; the key's Decrypt only through S3 in this region.
      Validations.of(sendRole).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${stack.getLogicalId(bucket.node.defaultChild as CfnBucket)}.Arn>/*]`,
        reason:
          'Messages name their attachment objects by key, so the send function may GetObject any object of this one ' +
          'bucket (no listing, no writes); the bucket policy denies reads to every other principal',
      });
      sendRole.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'ReadAttachments',
          actions: ['s3:GetObject'],
          resources: [bucket.arnForObjects('*')],
        }),
      );
      sendRole.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'DecryptAttachments',
          actions: ['kms:Decrypt'],
          resources: [key.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
        }),
      );
      // Whatever IAM allows elsewhere in the account: the send function alone reads, uploaders alone write.
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'OnlyTheSendFunctionReads',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectAttributes'],
          resources: [bucket.arnForObjects('*')],
          conditions: { ArnNotEquals: { 'aws:PrincipalArn': [sendRole.roleArn] } },
        }),
      );
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'OnlyUploadersWrite',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
          resources: [bucket.arnForObjects('*')],
          conditions: {
            ArnNotEquals: {
              // No uploader yet: the send function's role, which no statement lets write (so: nobody).
              'aws:PrincipalArn': Lazy.list({ produce: () => (uploaders.length ? uploaders : [sendRole.roleArn]) }),
            },
          },
        }),
      );
      // Keys are the only way to an object, and only the send function reads: nobody may learn the
      // keys by listing (ReadOnlyAccess allows s3:List*), nor empty the bucket under a message that
      // names an object. No exemption: expiry is S3's lifecycle, which bucket policies do not
      // govern, and no autoDeleteObjects custom resource empties this bucket (under
      // RemovalPolicy.DESTROY CloudFormation deletes it only once its objects have expired).
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'NobodyLists',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: [...ATTACHMENTS_LIST_ACTIONS.bucket],
          resources: [bucket.bucketArn],
        }),
      );
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'NobodyDeletesOrListsParts',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: [...ATTACHMENTS_LIST_ACTIONS.object, ...ATTACHMENTS_DELETE_ACTIONS],
          resources: [bucket.arnForObjects('*')],
        }),
      );
      // One uploader cannot replace another's object: every write creates, never overwrites. S3
      // evaluates s3:if-none-match on PutObject and CompleteMultipartUpload (s3:ObjectCreationOperation
      // true); CreateMultipartUpload and UploadPart carry no conditional header and stay allowed
      // ("Enforce conditional writes on Amazon S3 buckets", S3 user guide). A CopyObject into the
      // bucket is refused by the same rule. If-Match would overwrite an object whose ETag is known.
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'WritesOnlyCreate',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects('*')],
          conditions: { Null: { 's3:if-none-match': 'true' }, Bool: { 's3:ObjectCreationOperation': 'true' } },
        }),
      );
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'NoOverwriteByETag',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects('*')],
          conditions: { Null: { 's3:if-match': 'false' } },
        }),
      );
      // A team's prefix: only its own uploaders write under it, and they write nowhere else (a team's
      // messages may name objects under its prefix only: the send function refuses any other s3Key).
      const teamUploaders = new Map<string, string[]>();
      for (const team of Object.keys(props.settings.teams ?? {})) {
        const own: string[] = [];
        teamUploaders.set(team, own);
        const arns = Lazy.list({ produce: () => (own.length ? own : [sendRole.roleArn]) });
        const sid = team.replace(/[^A-Za-z0-9]/g, '');
        bucket.addToResourcePolicy(
          new iam.PolicyStatement({
            sid: `OnlyTeam${sid}WritesUnderItsPrefix`,
            effect: iam.Effect.DENY,
            principals: [new iam.AnyPrincipal()],
            actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
            resources: [bucket.arnForObjects(`${team}/*`)],
            conditions: { ArnNotEquals: { 'aws:PrincipalArn': arns } },
          }),
        );
        bucket.addToResourcePolicy(
          new iam.PolicyStatement({
            sid: `Team${sid}WritesOnlyUnderItsPrefix`,
            effect: iam.Effect.DENY,
            principals: [new iam.AnyPrincipal()],
            actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
            notResources: [bucket.arnForObjects(`${team}/*`)],
            conditions: { ArnEquals: { 'aws:PrincipalArn': arns } },
          }),
        );
      }
      const grantedFor = (arn: string): string | undefined =>
        [...teamUploaders].find(([, own]) => own.includes(arn))?.[0] ??
        (uploaders.includes(arn) ? 'the whole bucket' : undefined);
      return (grantee, team) => {
        const arn = principalArn(grantee.grantPrincipal, 'grantAttachmentUpload');
        // A team's uploaders may write under its prefix only: one principal uploads for one team, or for none.
        const already = grantedFor(arn);
        if (already !== undefined && already !== (team ?? 'the whole bucket')) {
          throw new Error(
            `grantAttachmentUpload: ${arn} already uploads for ${already === 'the whole bucket' ? already : `team ${already}`}; a principal uploads for one team, or for the pipeline's own messages`,
          );
        }
        if (team === undefined) {
          uploaders.push(arn);
          return bucket.grantPut(grantee);
        }
        const own = teamUploaders.get(team);
        if (own === undefined) {
          const known = [...teamUploaders.keys()];
          throw new Error(
            `grantAttachmentUpload: the pipeline has no team ${JSON.stringify(team)} (${known.length ? `its teams: ${known.join(', ')}` : 'it has no teams'})`,
          );
        }
        uploaders.push(arn);
        own.push(arn);
        return bucket.grantPut(grantee, `${team}/*`);
      };
    },
  };
}
