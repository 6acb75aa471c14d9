/** The local SES layer's tenants: created and associated through SES's API, checked on each send, shown in the mailbox. */
import { LocalTenants } from '../../../../../tools/dev/local/ses-tenants';

const SET_ARN = 'arn:aws:ses:eu-west-1:000000000000:configuration-set/ledger';

function withTenant(): LocalTenants {
  const tenants = new LocalTenants();
  expect(tenants.handle('POST', '/v2/email/tenants', { TenantName: 'mail-security' })).toEqual({ ok: true });
  expect(
    tenants.handle('POST', '/v2/email/tenants/resources', { TenantName: 'mail-security', ResourceArn: SET_ARN }),
  ).toEqual({ ok: true });
  return tenants;
}

test('a send for an existing tenant with its configuration set associated is taken; one without a tenant too', () => {
  const tenants = withTenant();
  expect(tenants.refusal({ TenantName: 'mail-security', ConfigurationSetName: 'ledger' })).toBeUndefined();
  expect(tenants.refusal({ ConfigurationSetName: 'other' })).toBeUndefined();
});

test('an unknown tenant, or a configuration set not associated with it, is refused as SES refuses', () => {
  const tenants = withTenant();
  expect(tenants.refusal({ TenantName: 'nobody' })).toMatchObject({ status: 404, type: 'NotFoundException' });
  expect(tenants.refusal({ TenantName: 'mail-security', ConfigurationSetName: 'other' })).toMatchObject({
    status: 400,
    type: 'BadRequestException',
    message: 'Configuration set <other> is not associated with tenant <mail-security>.',
  });
});

test('creating a tenant twice, a bad name, or associating with an unknown tenant are refused', () => {
  const tenants = withTenant();
  expect(tenants.handle('POST', '/v2/email/tenants', { TenantName: 'mail-security' })).toMatchObject({
    type: 'AlreadyExistsException',
  });
  expect(tenants.handle('POST', '/v2/email/tenants', { TenantName: 'a b' })).toMatchObject({ status: 400 });
  expect(
    tenants.handle('POST', '/v2/email/tenants/resources', { TenantName: 'nobody', ResourceArn: SET_ARN }),
  ).toMatchObject({ status: 404 });
  expect(tenants.handle('GET', '/v2/email/tenants', {})).toBeUndefined();
  expect(tenants.handle('POST', '/v2/email/outbound-emails', {})).toBeUndefined();
});

test("the mailbox shows each email's tenant; others and other text are left as they are", () => {
  const tenants = withTenant();
  const store = JSON.stringify({ emails: [{ messageId: 'ses-1' }, { messageId: 'ses-2' }], templates: {} });
  expect(tenants.withTenants(store)).toBe(store);
  tenants.record('ses-1', 'mail-security');
  tenants.record('ses-2', undefined);
  expect(JSON.parse(tenants.withTenants(store))).toEqual({
    emails: [{ messageId: 'ses-1', tenantName: 'mail-security' }, { messageId: 'ses-2' }],
    templates: {},
  });
  expect(tenants.withTenants('not json')).toBe('not json');
});

test("GetTenant answers in SES's format, sending ENABLED (nothing pauses a tenant locally); an unknown one is 404", () => {
  const tenants = withTenant();
  const answer = tenants.handle('POST', '/v2/email/tenants/get', { TenantName: 'mail-security' });
  expect(answer).toEqual({
    ok: true,
    body: {
      Tenant: {
        TenantName: 'mail-security',
        TenantId: expect.stringMatching(/^tn-[0-9a-f]{16}$/),
        TenantArn: expect.stringMatching(/^arn:aws:ses:us-east-1:000000000000:tenant\/mail-security\/tn-[0-9a-f]{16}$/),
        CreatedTimestamp: expect.any(Number),
        Tags: [],
        SendingStatus: 'ENABLED',
      },
    },
  });
  const tenant = (answer as unknown as { body: { Tenant: { TenantId: string; TenantArn: string } } }).body.Tenant;
  expect(tenant.TenantArn.endsWith(`/${tenant.TenantId}`)).toBe(true);
  expect(tenants.handle('POST', '/v2/email/tenants/get', { TenantName: 'nobody' })).toMatchObject({
    status: 404,
    type: 'NotFoundException',
  });
});
