/**
 * One callback try: a POST of the body with its Standard Webhooks headers, no redirect followed,
 * at most `timeoutMs` for the whole exchange. On AWS every address the host resolves to is checked
 * when the connection is made (the request's own `lookup`), so a name that points at a private,
 * loopback or link-local address is refused, however it resolves later. Node's http(s) modules,
 * not fetch: they take that lookup without another dependency.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { blockedAddress } from '../kernel/callbacks/address';
import { answerResult, type TryResult } from '../kernel/callbacks/retry';

export interface PostOptions {
  readonly timeoutMs: number;
  /** Locally only: private addresses and http:// allowed. */
  readonly allowPrivateAddresses: boolean;
  readonly now?: () => number;
}

/** The request's User-Agent: receivers can tell our callbacks by it. */
export const CALLBACK_USER_AGENT = 'exactly-once-email-callbacks/1';

/** An error the guard raises: not retried (the URL is at fault, not the network). */
class RefusedAddressError extends Error {}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses a blocked address (every one of them when `all` is asked). */
function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    for (const { address } of addresses) {
      const problem = blockedAddress(address);
      if (problem !== undefined) return callback(new RefusedAddressError(`${hostname} resolves to ${problem}`), []);
    }
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    return callback(null, first.address, first.family);
  });
}

function failureText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `connection failed (${code})` : `connection failed: ${message}`;
}

/** POSTs `body` to `url`; resolves to what the try came to (never rejects). */
export function postCallback(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: PostOptions,
): Promise<TryResult> {
  const now = options.now ?? Date.now;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ kind: 'refused', result: `not a URL: ${url}` });
  }
  const secure = target.protocol === 'https:';
  if (!secure && !options.allowPrivateAddresses) {
    return Promise.resolve({ kind: 'refused', result: 'only https:// URLs are called' });
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivateAddresses && isIP(host) !== 0) {
    // An IP literal is connected to without a lookup: checked as it stands.
    const problem = blockedAddress(host);
    if (problem !== undefined) return Promise.resolve({ kind: 'refused', result: problem });
  }
  return new Promise<TryResult>((resolve) => {
    const request = (secure ? https : http).request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': CALLBACK_USER_AGENT,
        },
        ...(options.allowPrivateAddresses ? {} : { lookup: guardedLookup as never }),
        timeout: options.timeoutMs,
      },
      (response) => {
        // Only the status and Retry-After count: the answer's body is read and dropped.
        response.resume();
        response.on('end', () =>
          resolve(
            answerResult(
              response.statusCode ?? 0,
              response.statusMessage ?? '',
              response.headers['retry-after'] as string | undefined,
              now(),
            ),
          ),
        );
        response.on('error', (error) => resolve({ kind: 'retry', result: failureText(error) }));
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error('timeout')), options.timeoutMs);
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('close', () => clearTimeout(deadline));
    request.on('error', (error) => {
      clearTimeout(deadline);
      if (error instanceof RefusedAddressError) resolve({ kind: 'refused', result: error.message });
      else if (error.message === 'timeout') resolve({ kind: 'retry', result: `timeout after ${options.timeoutMs} ms` });
      else resolve({ kind: 'retry', result: failureText(error) });
    });
    request.end(body);
  });
}
