/**
 * SES tenants for the local SES layer (ses-front.ts): aws-ses-v2-local has none. Through SES v2's
 * own API, as a deployment's `AWS::SES::Tenant` makes them: CreateTenant (`POST /v2/email/tenants`)
 * and CreateTenantResourceAssociation (`POST /v2/email/tenants/resources`). A SendEmail naming a
 * TenantName is refused unless that tenant exists and its configuration set is associated with it
 * (SES sends for a tenant only with resources associated with it); the tenant of each email sent
 * is kept, and `GET /store` (the mailbox) shows it as the email's `tenantName`.
 */
import type { Refusal } from './ses-content';

/** What a SendEmail body says of its tenant. */
export interface TenantSend {
  readonly TenantName?: string;
  readonly ConfigurationSetName?: string;
}

export class LocalTenants {
  /** Tenant name -> the ARNs of the resources associated with it. */
  private readonly tenants = new Map<string, Set<string>>();
  /** MessageId -> the tenant it was sent for. */
  private readonly sent = new Map<string, string>();

  /**
   * Answers CreateTenant and CreateTenantResourceAssociation as SES does (200, or its error);
   * undefined for any other request.
   */
  handle(
    method: string,
    pathname: string,
    input: Record<string, unknown> | undefined,
  ): Refusal | { ok: true } | undefined {
    if (method !== 'POST') return undefined;
    const name = typeof input?.TenantName === 'string' ? input.TenantName : undefined;
    if (pathname === '/v2/email/tenants') {
      if (!name || !/^[\w-]{1,64}$/.test(name)) {
        return {
          status: 400,
          type: 'BadRequestException',
          message: 'TenantName must be 1-64 letters, digits, _ or -.',
        };
      }
      if (this.tenants.has(name)) {
        return { status: 400, type: 'AlreadyExistsException', message: `Tenant <${name}> already exists.` };
      }
      this.tenants.set(name, new Set());
      return { ok: true };
    }
    if (pathname === '/v2/email/tenants/resources') {
      const arn = typeof input?.ResourceArn === 'string' ? input.ResourceArn : undefined;
      const resources = name ? this.tenants.get(name) : undefined;
      if (!resources)
        return { status: 404, type: 'NotFoundException', message: `Tenant <${name ?? ''}> does not exist.` };
      if (!arn) return { status: 400, type: 'BadRequestException', message: 'ResourceArn is required.' };
      resources.add(arn);
      return { ok: true };
    }
    return undefined;
  }

  /** Why SES would refuse this send for its tenant, or undefined (no tenant named, or one that may send it). */
  refusal(send: TenantSend): Refusal | undefined {
    const name = send.TenantName;
    if (name === undefined) return undefined;
    const resources = this.tenants.get(name);
    if (!resources) return { status: 404, type: 'NotFoundException', message: `Tenant <${name}> does not exist.` };
    const set = send.ConfigurationSetName;
    if (set !== undefined && ![...resources].some((arn) => arn.endsWith(`:configuration-set/${set}`))) {
      return {
        status: 400,
        type: 'BadRequestException',
        message: `Configuration set <${set}> is not associated with tenant <${name}>.`,
      };
    }
    return undefined;
  }

  /** Remembers that `messageId` was sent for `tenant`. */
  record(messageId: string, tenant: string | undefined): void {
    if (tenant !== undefined) this.sent.set(messageId, tenant);
  }

  /** aws-ses-v2-local's `/store` answer with each email's tenant as `tenantName`; other text unchanged. */
  withTenants(store: string): string {
    if (this.sent.size === 0) return store;
    try {
      const parsed = JSON.parse(store) as { emails?: { messageId?: string }[] };
      for (const email of parsed.emails ?? []) {
        const tenant = email.messageId === undefined ? undefined : this.sent.get(email.messageId);
        if (tenant !== undefined) Object.assign(email, { tenantName: tenant });
      }
      return JSON.stringify(parsed);
    } catch {
      return store;
    }
  }
}
