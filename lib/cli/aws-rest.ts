/**
 * Three AWS APIs the CLI calls without an SDK client of their own: Lambda's event source mappings
 * (pause, resume), STS GetCallerIdentity (who a resend is recorded as) and SES v2 GetTenant (a
 * tenant's sending status, for verify). The package depends on no Lambda, STS or SES client (the
 * functions' SES client is bundled into their assets), so these few requests are signed by the SDK's own signer
 * (../aws-signer.ts) with the credentials and region the SQS client resolves (the usual AWS chain:
 * environment, profile, SSO, instance role).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { signedRequestHeaders, type SigningCredentials } from '../aws-signer';
import type { ClientSettings } from './target';

/** Credentials as the SDK resolves them. */
export type Credentials = SigningCredentials;

/** A request to sign: the path is already URI-encoded as sent. */
export interface Unsigned {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly host: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** RFC 3986 encoding, as SigV4's canonical query wants it. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The query string of `query`, sorted and encoded as it is signed (also what is sent). */
export function canonicalQuery(query: Readonly<Record<string, string>> = {}): string {
  return Object.keys(query)
    .sort()
    .map((k) => `${encode(k)}=${encode(query[k] ?? '')}`)
    .join('&');
}

/** The headers to send with `request` over HTTPS, Authorization included (Signature Version 4). */
export function sign(
  request: Unsigned,
  credentials: Credentials,
  region: string,
  service: string,
  now: Date = new Date(),
): Promise<Record<string, string>> {
  return signedRequestHeaders({ ...request, protocol: 'https:' }, { credentials, region, service, now });
}

/** An error AWS answered with, named as the SDK names them (AccessDeniedException, ...). */
export class AwsRestError extends Error {
  constructor(
    name: string,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
    this.name = name;
  }
}

/** Region and credentials from the usual AWS settings (or `settings.region`). */
export async function resolveAws(settings: ClientSettings): Promise<{ region: string; credentials: Credentials }> {
  const client = new SQSClient(settings);
  try {
    const [region, credentials] = await Promise.all([client.config.region(), client.config.credentials()]);
    return { region, credentials };
  } finally {
    client.destroy();
  }
}

/**
 * Sends a signed request; resolves to the response body, or throws {@link AwsRestError}. `origin`
 * (`http://127.0.0.1:4579`: npm start's emulators) replaces `https://<host>`. @default AWS's endpoint
 */
export async function call(
  request: Unsigned,
  service: string,
  aws: { region: string; credentials: Credentials },
  origin?: string,
): Promise<string> {
  const headers = await sign(request, aws.credentials, aws.region, service);
  delete headers.host;
  const query = canonicalQuery(request.query);
  const response = await fetch(`${origin ?? `https://${request.host}`}${request.path}${query ? `?${query}` : ''}`, {
    method: request.method,
    headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (response.ok) return text;
  // Lambda answers JSON ({"Type","message"} and an x-amzn-errortype header); STS answers XML.
  const type =
    response.headers.get('x-amzn-errortype')?.split(':')[0] ??
    /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ??
    `HTTP${response.status}`;
  const message =
    (() => {
      try {
        const json = JSON.parse(text) as { message?: string; Message?: string };
        return json.message ?? json.Message;
      } catch {
        return /<Message>([^<]+)<\/Message>/.exec(text)?.[1];
      }
    })() ?? text.slice(0, 200);
  throw new AwsRestError(type, message, response.status);
}

/** The ARN of the caller (STS GetCallerIdentity). */
export async function callerArn(aws: { region: string; credentials: Credentials }): Promise<string> {
  const body = 'Action=GetCallerIdentity&Version=2011-06-15';
  const text = await call(
    {
      method: 'POST',
      host: `sts.${aws.region}.amazonaws.com`,
      path: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
    },
    'sts',
    aws,
  );
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(text)?.[1];
  if (!arn) throw new AwsRestError('UnexpectedResponse', 'GetCallerIdentity returned no Arn', 200);
  return arn;
}

/** SES v2 GetTenant of `tenantName` in `region`, as the SES v2 API takes it (POST, a JSON body). */
export function getTenantRequest(region: string, tenantName: string): Unsigned {
  return {
    method: 'POST',
    host: `email.${region}.amazonaws.com`,
    path: '/v2/email/tenants/get',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ TenantName: tenantName }),
  };
}

/** A tenant's `SendingStatus` (SES v2 GetTenant), or undefined when SES names none; at `origin` when given (npm start's SES layer). */
export async function tenantSendingStatus(
  aws: { region: string; credentials: Credentials },
  tenantName: string,
  origin?: string,
): Promise<string | undefined> {
  const text = await call(getTenantRequest(aws.region, tenantName), 'ses', aws, origin);
  const answer = JSON.parse(text) as { Tenant?: { SendingStatus?: unknown } };
  const status = answer.Tenant?.SendingStatus;
  return typeof status === 'string' ? status : undefined;
}
