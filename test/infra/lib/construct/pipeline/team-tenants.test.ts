/**
 * The teams' SES tenants in the template: an `AWS::SES::Tenant` for each team with `sesTenant`
 * only, with SES's standard reputation policy and the identity, configuration set and listed
 * templates associated; its name, unique per pipeline, is what the send function names on the
 * team's sends; SendEmail is allowed on it, and the send function waits for it.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { TEAMS_ENV } from '../../../../../lambdas/kernel/teams';
import { EmailPipeline } from '../../../../../lib/construct/email-pipeline';
import { tenantNameOf } from '../../../../../lib/construct/pipeline/team-tenants';
import { BASE_PROPS, synthesize, userStack } from '../../../helpers';

const TEAMS = {
  billing: { senders: ['billing@example.com'], publishers: ['arn:aws:iam::111122223333:role/billing'] },
  security: {
    senders: ['security@example.com'],
    publishers: ['arn:aws:iam::111122223333:role/security'],
    sesTenant: true,
  },
};

const { template, stack } = synthesize({ teams: TEAMS, sesTemplateNames: ['receipt'] });
const tenants = template.findResources('AWS::SES::Tenant');
const [tenantId, tenant] = Object.entries(tenants)[0] ?? [];

test('one tenant, for the team that asked; its name is unique to the pipeline and fits SES', () => {
  expect(Object.keys(tenants)).toHaveLength(1);
  const name = tenant?.Properties.TenantName as string;
  expect(name).toMatch(/^[\w-]{1,64}$/);
  expect(name.endsWith('-security')).toBe(true);
  expect(stack.pipeline.teamTenants.billing).toBeUndefined();
  expect(stack.getLogicalId(stack.pipeline.teamTenants.security!)).toBe(tenantId);
});

test("SES's standard reputation policy, and the identity, configuration set and listed templates associated", () => {
  const text = JSON.stringify(tenant?.Properties);
  expect(text).toContain(':aws:reputation-policy/standard');
  const associations = JSON.stringify(tenant?.Properties.ResourceAssociations);
  expect(associations).toContain(':identity/example.com');
  expect(associations).toContain(':configuration-set/');
  expect(associations).toContain(':template/receipt');
  expect(tenant?.Properties.ResourceAssociations).toHaveLength(3);
});

test("the send function names the tenant on the team's sends, may send as it, and waits for it", () => {
  const [fnId, fn] = Object.entries(template.findResources('AWS::Lambda::Function')).find(
    ([, f]) => f.Properties.Environment?.Variables?.[TEAMS_ENV] !== undefined,
  ) ?? ['', undefined];
  const routes = JSON.stringify(fn?.Properties.Environment.Variables[TEAMS_ENV]);
  // JSON in a Fn::Join (the topic ARNs are tokens), so its quotes come escaped.
  expect(routes).toContain(`\\"tenantName\\":\\"${tenant?.Properties.TenantName}\\"`);
  expect(routes.match(/tenantName/g)).toHaveLength(1);
  expect(fn?.DependsOn).toContain(tenantId);
  const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (p) => p.Properties.PolicyDocument.Statement as { Sid?: string; Resource: unknown }[],
  );
  const send = statements.find((s) => s.Sid === 'SendAsConfiguredSender');
  expect(JSON.stringify(send?.Resource)).toContain(JSON.stringify({ 'Fn::GetAtt': [tenantId, 'Arn'] }));
  expect(fnId).not.toBe('');
});

test('two pipelines in one stack get two tenants of their own', () => {
  const { stack: user } = userStack();
  const teams = { security: { senders: ['security@example.com'], sesTenant: true } };
  const a = new EmailPipeline(user, 'MailA', { ...BASE_PROPS, teams });
  const b = new EmailPipeline(user, 'MailB', { ...BASE_PROPS, teams });
  const names = Object.values(Template.fromStack(user).findResources('AWS::SES::Tenant')).map(
    (t) => t.Properties.TenantName as string,
  );
  expect(new Set(names).size).toBe(2);
  expect(names.sort()).toEqual([tenantNameOf(a, 'security'), tenantNameOf(b, 'security')].sort());
});
