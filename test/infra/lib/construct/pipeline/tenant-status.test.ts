/**
 * The SES tenants' sending status events in the template: with a team's tenant, two rules on the
 * default bus (SES's `Sending Status Disabled` and `Sending Status Enabled`) that match SES's own
 * events (`aws.ses`, a source reserved to AWS) of this account naming one of this pipeline's
 * tenants, and nothing else: a forged source, another account, another tenant or no tenant at all
 * does not match (the synthesized patterns are matched as EventBridge matches them). Each event
 * goes to a log group the logs key encrypts and only these rules may write to; the Endpoints'
 * Teams name the team's tenant. Without a tenant, none of it is built.
 */
import { TEAMS_ENV } from '../../../../../lambdas/kernel/teams';
import {
  SENDING_STATUS_DETAIL_TYPES,
  tenantStatusEventPattern,
} from '../../../../../lib/construct/pipeline/tenant-status';
import { matchesPattern } from '../../../../../tools/dev/local/event-bus';
import { synthesize } from '../../../helpers';

const TEAMS = {
  billing: { senders: ['billing@example.com'], sesTenant: true },
  support: { senders: ['support@example.com'] },
};

const ACCOUNT = '111122223333';
const TENANT_ARN = `arn:aws:ses:eu-west-1:${ACCOUNT}:tenant/billing-tenant/tn-0123456789abcdef`;

const { template, stack } = synthesize({ teams: TEAMS });
const [tenantId] = Object.keys(template.findResources('AWS::SES::Tenant'));

type Resource = { Properties: Record<string, any> };
const resources = (type: string) => Object.entries(template.findResources(type)) as [string, Resource][];

/** The tenants' rules (those on `aws.ses` naming tenants), by logical id. */
const tenantRules = resources('AWS::Events::Rule').filter(([, r]) => r.Properties.EventPattern.resources);

/**
 * A rule's pattern as EventBridge sees it once deployed: the tenant's ARN and the account in place
 * of CloudFormation's references to them.
 */
function deployedPattern(rule: Resource): any {
  const text = JSON.stringify(rule.Properties.EventPattern)
    .replaceAll(JSON.stringify({ 'Fn::GetAtt': [tenantId, 'Arn'] }), JSON.stringify(TENANT_ARN))
    .replaceAll(JSON.stringify({ Ref: 'AWS::AccountId' }), JSON.stringify(ACCOUNT));
  return JSON.parse(text);
}

/** An event in EventBridge's envelope, as SES sends it for a tenant's status change. */
function sesEvent(detailType: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '0',
    id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    'detail-type': detailType,
    source: 'aws.ses',
    account: ACCOUNT,
    time: '2026-12-04T10:00:00Z',
    region: 'eu-west-1',
    resources: [TENANT_ARN],
    detail: {},
    ...overrides,
  };
}

const ruleOf = (detailType: string): Resource => {
  const found = tenantRules.find(([, r]) => r.Properties.EventPattern['detail-type'][0] === detailType);
  if (!found) throw new Error(`no rule for ${detailType}`);
  return found[1];
};

test('two rules, one per status change, each of exactly the pattern tenantStatusEventPattern builds', () => {
  expect(tenantRules).toHaveLength(2);
  const pipeline = stack.pipeline.tenantStatus!;
  for (const change of ['paused', 'resumed'] as const) {
    const rule = pipeline.rules[change];
    const [, synthesized] = tenantRules.find(([id]) => id === stack.getLogicalId(rule.node.defaultChild as never))!;
    expect(synthesized.Properties.EventPattern).toEqual(
      stack.resolve(tenantStatusEventPattern(stack.account, [stack.pipeline.teamTenants.billing!.attrArn], change)),
    );
    expect(synthesized.Properties.EventPattern['detail-type']).toEqual([SENDING_STATUS_DETAIL_TYPES[change]]);
  }
});

describe('the paused rule, matched as EventBridge matches', () => {
  const pattern = deployedPattern(ruleOf('Sending Status Disabled'));

  test("matches SES's Sending Status Disabled event of this pipeline's tenant", () => {
    expect(matchesPattern(pattern, sesEvent('Sending Status Disabled'))).toBe(true);
  });

  test.each([
    ['a forged source (anyone may PutEvents under a custom source)', { source: 'custom.ses' }],
    ['a source that only resembles SES’s', { source: 'aws.ses.forged' }],
    ['another account', { account: '444455556666' }],
    ['another tenant of the account', { resources: [TENANT_ARN.replace('billing-tenant', 'other-tenant')] }],
    ['no resource at all', { resources: [] }],
  ])('does not match %s', (_, overrides) => {
    const event = sesEvent('Sending Status Disabled', overrides);
    expect(matchesPattern(pattern, event)).toBe(false);
  });

  test('does not match an event without a resources field', () => {
    const event = sesEvent('Sending Status Disabled');
    delete event.resources;
    expect(matchesPattern(pattern, event)).toBe(false);
  });

  test('does not match the other status, nor an email event of the same tenant', () => {
    expect(matchesPattern(pattern, sesEvent('Sending Status Enabled'))).toBe(false);
    expect(matchesPattern(pattern, sesEvent('Email Bounced'))).toBe(false);
  });
});

test("the resumed rule matches SES's Sending Status Enabled of the tenant only", () => {
  const pattern = deployedPattern(ruleOf('Sending Status Enabled'));
  expect(matchesPattern(pattern, sesEvent('Sending Status Enabled'))).toBe(true);
  expect(matchesPattern(pattern, sesEvent('Sending Status Enabled', { source: 'custom.ses' }))).toBe(false);
  expect(matchesPattern(pattern, sesEvent('Sending Status Disabled'))).toBe(false);
});

test('each rule sends its events to the log group, which the logs key encrypts and names', () => {
  const [logGroupId, logGroup] = resources('AWS::Logs::LogGroup').find(([, g]) =>
    String(g.Properties.LogGroupName).endsWith('/tenant-status'),
  )!;
  expect(logGroup.Properties.KmsKeyId).toBeDefined();
  for (const [, rule] of tenantRules) {
    expect(rule.Properties.Targets).toHaveLength(1);
    expect(JSON.stringify(rule.Properties.Targets[0].Arn)).toContain(':log-group:');
    expect(JSON.stringify(rule.Properties.Targets[0].Arn)).toContain(JSON.stringify({ Ref: logGroupId }));
  }
  const keyPolicy = JSON.stringify(resources('AWS::KMS::Key').map(([, k]) => k.Properties.KeyPolicy));
  expect(keyPolicy).toContain(`log-group:${logGroup.Properties.LogGroupName}`);
});

test('only the two rules may write to the log group (the logs resource policy)', () => {
  const policies = resources('AWS::Logs::ResourcePolicy');
  expect(policies).toHaveLength(1);
  const document = JSON.stringify(stack.resolve(policies[0]![1].Properties.PolicyDocument));
  expect(document).toContain('events.amazonaws.com');
  expect(document).toContain('logs:PutLogEvents');
  for (const [ruleId] of tenantRules) expect(document).toContain(ruleId);
  expect(document).toContain('aws:SourceArn');
});

test("the Endpoints' Teams name the team's tenant (what verify asks GetTenant about), the other team's none", () => {
  const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
  const [, endpoints] = Object.entries(outputs).find(([id]) => id.includes('Endpoints'))!;
  const value = JSON.stringify(endpoints.Value);
  const name = stack.pipeline.teamTenants.billing!.tenantName;
  expect(value).toContain(`\\"TenantName\\":\\"${name}\\"`);
  expect(value.split('TenantName').length - 1).toBe(1);
});

test('without a tenant (teams, none with sesTenant), none of it: no tenant rule, log group or logs policy', () => {
  const plain = synthesize({ teams: { support: { senders: ['support@example.com'] } } });
  expect(plain.stack.pipeline.tenantStatus).toBeUndefined();
  const rules = Object.values(plain.template.findResources('AWS::Events::Rule')) as Resource[];
  expect(rules.some((r) => r.Properties.EventPattern.resources)).toBe(false);
  expect(plain.template.findResources('AWS::Logs::ResourcePolicy')).toEqual({});
  expect(JSON.stringify(plain.template.toJSON())).not.toContain('tenant-status');
  expect(plain.stack.pipeline.logGroupNames.tenantStatus).toBeUndefined();
  // The send function's teams are unchanged by it (no tenant named).
  expect(JSON.stringify(plain.template.toJSON())).toContain(TEAMS_ENV);
});
