/**
 * SES tenants for the local SES layer (ses-front.ts): aws-ses-v2-local has none. Through SES v2's
 * own API, as a deployment's `AWS::SES::Tenant` makes them: CreateTenant (`POST /v2/email/tenants`)
 * and CreateTenantResourceAssociation (`POST /v2/email/tenants/resources`); GetTenant (`POST
 * /v2/email/tenants/get`) answers in SES's format, its `SendingStatus` always `ENABLED` (nothing
 * pauses a tenant locally: there is no reputation here). A SendEmail naming a
 * TenantName is refused unless that tenant exists and its configuration set is associated with it
 * (SES sends for a tenant only with resources associated with it); the tenant of each email sent
 * is kept, and `GET /store` (the mailbox) shows it as the email's `tenantName`.
 */
import { randomBytes } from 'node:crypto';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../../../lib/cli/target';
import type { Refusal } from './ses-content';

/** What a SendEmail body says of its tenant. */
export interface TenantSend {
  readonly TenantName?: string;
  readonly ConfigurationSetName?: string;
}

/** A local tenant: its id, when it was made, and the ARNs of the resources associated with it. */
interface LocalTenant {
  readonly id: string;
  readonly createdSeconds: number;
  readonly resources: Set<string>;
}

export class LocalTenants {
  /** Tenant name -> the tenant. */
  private readonly tenants = new Map<string, LocalTenant>();
  /** MessageId -> the tenant it was sent for. */
  private readonly sent = new Map<string, string>();

  /**
   * Answers CreateTenant, CreateTenantResourceAssociation and GetTenant as SES does (200 with its
   * body, or its error); undefined for any other request.
   */
  handle(
    method: string,
    pathname: string,
    input: Record<string, unknown> | undefined,
  ): Refusal | { ok: true; body?: Record<string, unknown> } | undefined {
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
      this.tenants.set(name, {
        id: `tn-${randomBytes(8).toString('hex')}`,
        createdSeconds: Math.floor(Date.now() / 1000),
        resources: new Set(),
      });
      return { ok: true };
    }
    if (pathname === '/v2/email/tenants/get') {
      const tenant = name ? this.tenants.get(name) : undefined;
      if (!name || !tenant)
        return { status: 404, type: 'NotFoundException', message: `Tenant <${name ?? ''}> does not exist.` };
      return {
        ok: true,
        body: {
          Tenant: {
            TenantName: name,
            TenantId: tenant.id,
            TenantArn: `arn:aws:ses:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:tenant/${name}/${tenant.id}`,
            CreatedTimestamp: tenant.createdSeconds,
            Tags: [],
            SendingStatus: 'ENABLED',
          },
        },
      };
    }
    if (pathname === '/v2/email/tenants/resources') {
      const arn = typeof input?.ResourceArn === 'string' ? input.ResourceArn : undefined;
      const resources = name ? this.tenants.get(name)?.resources : undefined;
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
    const resources = this.tenants.get(name)?.resources;
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
