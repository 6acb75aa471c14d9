/**
 * Requests to the pipeline's IAM-authenticated Lambda function URLs: the status URL (the stack's
 * `StatusUrl` output, `<function URL>deliveries/`, GET only) and the cancel URL (`CancelUrl`, a
 * function URL of its own that only the cancel principals may invoke, DELETE only). Each request is
 * signed with AWS Signature Version 4 (service `lambda`), here with node:crypto only, so that the
 * publisher client and the packaged CLI need no SDK beyond the SNS client they already have (whose
 * credential chain and region they pass in). The local pipeline's status server (npm start) takes
 * the same requests and ignores the signature. A cancel is `DELETE <CancelUrl><key>`
 * (lambdas/status/http.ts); the status URL answers it 405.
 */
import { createHash, createHmac } from 'node:crypto';
import type { CancelResult } from '../lambdas/status/cancel';

export type { CancelOutcome, CancelResult } from '../lambdas/status/cancel';

/** AWS credentials as the SDK's providers give them. */
export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** What signing a request takes: credentials, the region (from the URL's host when it names one), the time. */
export interface SigningContext {
  readonly credentials: SigningCredentials;
  readonly region: string;
  /** @default new Date() */
  readonly now?: Date;
}

function sha256Hex(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 3986 percent-encoding, as SigV4 wants it (`encodeURIComponent` leaves `!'()*`). */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** SigV4's canonical URI of a path as sent (already percent-encoded): every service but S3 encodes it again. */
export function canonicalUri(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `/${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** The region a function URL's host names (`<id>.lambda-url.<region>.on.aws`), if it names one. */
export function regionOfFunctionUrl(url: URL): string | undefined {
  return /^[^.]+\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(url.hostname)?.[1];
}

/**
 * The headers that sign `method url` (empty body) for `lambda` in the context's region (the URL's,
 * when its host names one): `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` with a
 * session, and `authorization`.
 */
export function signedHeaders(method: string, url: URL, context: SigningContext): Record<string, string> {
  const region = regionOfFunctionUrl(url) ?? context.region;
  const amzDate = (context.now ?? new Date())
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const date = amzDate.slice(0, 8);
  const payloadHash = sha256Hex('');
  const headers: Record<string, string> = {
    host: url.host,
    'x-amz-content-sha256': payloadHash,
    'x-amz-date': amzDate,
    ...(context.credentials.sessionToken ? { 'x-amz-security-token': context.credentials.sessionToken } : {}),
  };
  const names = Object.keys(headers).sort();
  const signed = names.join(';');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => `${escapeUri(k)}=${escapeUri(v)}`)
    .sort()
    .join('&');
  const canonical = [
    method.toUpperCase(),
    canonicalUri(url.pathname),
    query,
    names.map((name) => `${name}:${(headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join(''),
    signed,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/lambda/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${context.credentials.secretAccessKey}`, date), region), 'lambda'),
    'aws4_request',
  );
  const signature = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  const { host, ...rest } = headers;
  void host;
  return {
    ...rest,
    authorization: `AWS4-HMAC-SHA256 Credential=${context.credentials.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
  };
}

/**
 * The status or cancel URL answered something else than a cancel's 200 or 409 (403: the caller may
 * not invoke it, so is no cancel principal; 405: a DELETE sent to the status URL, not the cancel URL).
 */
export class StatusUrlError extends Error {
  override readonly name = 'StatusUrlError';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** `<baseUrl><key>`: the key percent-encoded (a `/` in it too), under the output's `deliveries/`. */
export function deliveryUrl(baseUrl: string, key: string): URL {
  return new URL(`${baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`}${encodeURIComponent(key)}`);
}

/**
 * `DELETE <cancelUrl><key>`, signed: 200 and 409 resolve with the result, anything else throws
 * {@link StatusUrlError}. `cancelUrl` is the stack's `CancelUrl` output (or the local outputs.json's).
 */
export async function cancelAtCancelUrl(
  cancelUrl: string,
  key: string,
  context: SigningContext,
  timeoutMs = 10_000,
): Promise<CancelResult> {
  const url = deliveryUrl(cancelUrl, key);
  const response = await fetch(url, {
    method: 'DELETE',
    headers: signedHeaders('DELETE', url, context),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 409) {
    let message = text.slice(0, 500);
    try {
      message = String((JSON.parse(text) as { message?: unknown; Message?: unknown }).message ?? message);
    } catch {
      // not JSON: the text as it came
    }
    throw new StatusUrlError(response.status, `${url.origin} answered ${response.status}: ${message}`);
  }
  return JSON.parse(text) as CancelResult;
}

/**
 * @deprecated The status URL no longer cancels (it answers a DELETE 405): give the stack's
 * `CancelUrl` to {@link cancelAtCancelUrl}. Kept so that callers compile while they move; it sends
 * the same signed DELETE to whatever URL it is given.
 */
export const cancelAtStatusUrl = cancelAtCancelUrl;
