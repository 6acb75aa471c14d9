/**
 * Requests to the pipeline's IAM-authenticated Lambda function URLs: the status URL (the stack's
 * `StatusUrl` output, `<function URL>deliveries/`, GET only) and the cancel URL (`CancelUrl`, a
 * function URL of its own that only the cancel principals may invoke, DELETE only). Each request is
 * signed with AWS Signature Version 4 (service `lambda`) by the SDK's own signer (aws-signer.ts), so
 * that the publisher client and the packaged CLI need no SDK client beyond the SNS client they
 * already have (whose credential chain and region they pass in). The local pipeline's status server (npm start) takes
 * the same requests and ignores the signature. A cancel is `DELETE <CancelUrl><key>`
 * (lambdas/status/http.ts); the status URL answers it 405.
 */
import type { CancelResult } from '../lambdas/status/cancel';
import { signedRequestHeaders, type SigningCredentials } from './aws-signer';

export type { CancelOutcome, CancelResult } from '../lambdas/status/cancel';
export type { SigningCredentials } from './aws-signer';

/** What signing a request takes: credentials, the region (from the URL's host when it names one), the time. */
export interface SigningContext {
  readonly credentials: SigningCredentials;
  readonly region: string;
  /** @default new Date() */
  readonly now?: Date;
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
export async function signedHeaders(
  method: string,
  url: URL,
  context: SigningContext,
): Promise<Record<string, string>> {
  const query = Object.fromEntries(url.searchParams.entries());
  const { host, ...headers } = await signedRequestHeaders(
    { method, protocol: url.protocol, host: url.host, path: url.pathname, query },
    {
      credentials: context.credentials,
      region: regionOfFunctionUrl(url) ?? context.region,
      service: 'lambda',
      ...(context.now ? { now: context.now } : {}),
    },
  );
  void host;
  return headers;
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

/**
 * `<baseUrl><key>`: the key percent-encoded (a `/` in it too), under the output's `deliveries/`;
 * `?team=NAME` when a team is named (the key that team published: `<team>#<key>`).
 */
export function deliveryUrl(baseUrl: string, key: string, team?: string): URL {
  const url = new URL(`${baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`}${encodeURIComponent(key)}`);
  if (team !== undefined) url.searchParams.set('team', team);
  return url;
}

/** How a cancel is sent: within `timeoutMs` (default 10 s), for `team`'s key when one is named. */
export interface CancelRequestOptions {
  /** @default 10000 */
  readonly timeoutMs?: number;
  /** The team that published the key. @default none: the key as given */
  readonly team?: string;
}

/**
 * `DELETE <cancelUrl><key>[?team=NAME]`, signed: 200 and 409 resolve with the result, anything else
 * throws {@link StatusUrlError}. `cancelUrl` is the stack's `CancelUrl` output (or the local
 * outputs.json's). `options` may still be the timeout alone (ms), as it was before teams.
 */
export async function cancelAtCancelUrl(
  cancelUrl: string,
  key: string,
  context: SigningContext,
  options: CancelRequestOptions | number = {},
): Promise<CancelResult> {
  const { timeoutMs = 10_000, team } = typeof options === 'number' ? { timeoutMs: options } : options;
  const url = deliveryUrl(cancelUrl, key, team);
  const response = await fetch(url, {
    method: 'DELETE',
    headers: await signedHeaders('DELETE', url, context),
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
