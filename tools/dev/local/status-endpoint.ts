/**
 * The local pipeline's status endpoint: the status URL, `GET /deliveries/{key}`, and the cancel
 * URL, `DELETE /cancel/deliveries/{key}` (the deployed cancel function has a URL of its own; here
 * it is a path of its own), on a plain node:http server, answering with the same code as the
 * deployed status and cancel functions (lambdas/status/http.ts over lookup.ts and cancel.ts): the
 * status URL refuses a DELETE. No authentication: it listens on 127.0.0.1 only, and a cancel is
 * recorded as by `local (unauthenticated)`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryReport } from '../../../lambdas/kernel/ledger/schema';
import type { CancelResult } from '../../../lambdas/status/cancel';
import { handleCancelRequest, handleStatusRequest } from '../../../lambdas/status/http';

/** STATUS_PORT, else 8010 (0 picks a free port). */
export function statusPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.STATUS_PORT;
  if (raw === undefined || raw.trim() === '') return 8010;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`STATUS_PORT=${raw} is not a port`);
  return port;
}

/** The path under which the local server answers as the cancel URL does. */
export const LOCAL_CANCEL_PREFIX = '/cancel';

export interface StatusEndpoint {
  /** Base URL, e.g. `http://127.0.0.1:8010`; lookups are `${url}/deliveries/{key}`. */
  readonly url: string;
  /** The cancel URL's base, `${url}/cancel`: cancels are `DELETE ${cancelUrl}/deliveries/{key}`. */
  readonly cancelUrl: string;
  close(): Promise<void>;
}

export interface StatusEndpointOptions {
  readonly port: number;
  /** The status URL's GET: a key's report (`team`: the key of that team, from `?team=NAME`). */
  readonly lookup: (key: string, team?: string) => Promise<DeliveryReport>;
  /** Called with a lookup that failed for another reason than a bad key (the answer is a 503). */
  readonly onError?: (error: unknown) => void;
  /** The cancel URL's DELETE: cancels a key. @default none: the cancel path is answered 404 */
  readonly cancel?: (key: string, team?: string) => Promise<CancelResult>;
}

/** Who a local cancel is recorded as: the local server authenticates nobody. */
export const LOCAL_CANCELLER = 'local (unauthenticated)';

export function startStatusEndpoint(options: StatusEndpointOptions): Promise<StatusEndpoint> {
  const server = createServer((request, response) => {
    // The request target as sent: the path, then the query (`?team=NAME`).
    const target = request.url ?? '/';
    const method = request.method ?? 'GET';
    const cancel = options.cancel;
    const answered =
      cancel && target.startsWith(`${LOCAL_CANCEL_PREFIX}/`)
        ? handleCancelRequest(method, target.slice(LOCAL_CANCEL_PREFIX.length), cancel, options.onError)
        : handleStatusRequest(method, target, options.lookup, options.onError);
    void answered.then((answer) => {
      response.writeHead(answer.statusCode, answer.headers);
      response.end(answer.body);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `The status port ${options.port} is in use: stop what holds it, or set STATUS_PORT to another port`,
            )
          : error,
      ),
    );
    server.listen(options.port, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        cancelUrl: `http://127.0.0.1:${port}${LOCAL_CANCEL_PREFIX}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
