/**
 * The attachments bucket with teams: an uploader granted for a team writes under the team's
 * prefix `<team>/` only, nobody else writes there (the pipeline's own uploaders neither), and one
 * principal uploads for one team or for none.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import { synthesize } from '../../../helpers';

type Statement = {
  Sid?: string;
  Effect: string;
  Action: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

const TEAMS = {
  billing: { senders: ['billing@example.com'] },
  security: { senders: ['security@example.com'] },
};
const text = (value: unknown): string => JSON.stringify(value);

let billingRole!: iam.Role;
let wideRole!: iam.Role;
const s = synthesize({ teams: TEAMS }, (stack) => {
  billingRole = new iam.Role(stack, 'BillingUploader', { assumedBy: new iam.AccountRootPrincipal() });
  wideRole = new iam.Role(stack, 'WideUploader', { assumedBy: new iam.AccountRootPrincipal() });
  stack.pipeline.grantAttachmentUpload(billingRole, { team: 'billing' });
  stack.pipeline.grantAttachmentUpload(wideRole);
});
const idOf = (role: iam.Role) => s.stack.getLogicalId(role.node.defaultChild as never);
const policy: Statement[] = Object.values(s.template.findResources('AWS::S3::BucketPolicy'))[0]?.Properties
  .PolicyDocument.Statement;
const bySid = (sid: string) => policy.find((st) => st.Sid === sid);

test("a team's uploader may put objects under <team>/ only (its IAM policy), and the bucket exempts it there", () => {
  const statements: Statement[] = Object.values(s.template.findResources('AWS::IAM::Policy'))
    .filter((p) => text(p.Properties.Roles).includes(idOf(billingRole)))
    .flatMap((p) => p.Properties.PolicyDocument.Statement);
  const put = statements.find((st) => text(st.Action).includes('s3:PutObject'));
  expect(text(put?.Resource)).toContain('/billing/*');
  const onlyBilling = bySid('OnlyTeambillingWritesUnderItsPrefix');
  expect(onlyBilling).toMatchObject({ Effect: 'Deny' });
  expect(text(onlyBilling?.Resource)).toContain('/billing/*');
  const exempt = text(onlyBilling?.Condition?.ArnNotEquals?.['aws:PrincipalArn']);
  expect(exempt).toContain(idOf(billingRole));
  expect(exempt).not.toContain(idOf(wideRole));
});

test("a team's uploader is denied every other object; the pipeline's own uploader is denied the teams' prefixes", () => {
  const elsewhere = bySid('TeambillingWritesOnlyUnderItsPrefix');
  expect(elsewhere).toMatchObject({ Effect: 'Deny' });
  expect(text(elsewhere?.NotResource)).toContain('/billing/*');
  expect(text(elsewhere?.Condition?.ArnEquals?.['aws:PrincipalArn'])).toContain(idOf(billingRole));
  // security has no uploader: only the send role (which may not write at all) is exempt under security/.
  const security = text(bySid('OnlyTeamsecurityWritesUnderItsPrefix')?.Condition?.ArnNotEquals?.['aws:PrincipalArn']);
  expect(security).not.toContain(idOf(billingRole));
  expect(security).not.toContain(idOf(wideRole));
});

test('an unknown team, or one principal for two teams (or a team and the whole bucket), is refused at synth', () => {
  expect(() =>
    synthesize({ teams: TEAMS }, (stack) =>
      stack.pipeline.grantAttachmentUpload(new iam.Role(stack, 'R', { assumedBy: new iam.AccountRootPrincipal() }), {
        team: 'payroll',
      }),
    ),
  ).toThrow('the pipeline has no team "payroll" (its teams: billing, security)');
  expect(() =>
    synthesize({ teams: TEAMS }, (stack) => {
      const role = new iam.Role(stack, 'R', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantAttachmentUpload(role, { team: 'billing' });
      stack.pipeline.grantAttachmentUpload(role, { team: 'security' });
    }),
  ).toThrow('already uploads for team billing');
  expect(() =>
    synthesize({ teams: TEAMS }, (stack) => {
      const role = new iam.Role(stack, 'R', { assumedBy: new iam.AccountRootPrincipal() });
      stack.pipeline.grantAttachmentUpload(role);
      stack.pipeline.grantAttachmentUpload(role, { team: 'billing' });
    }),
  ).toThrow('already uploads for the whole bucket');
});
