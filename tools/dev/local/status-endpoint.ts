/**
 * The local pipeline's status endpoint: `GET /deliveries/{key}` and `DELETE /deliveries/{key}`
 * (cancel) on a plain node:http server, answering with the same code as the deployed status
 * function (lambdas/status/http.ts over lookup.ts and cancel.ts). No authentication: it listens on
 * 127.0.0.1 only, and a cancel is recorded as by `local (unauthenticated)`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryReport } from '../../../lambdas/kernel/ledger/schema';
import type { CancelResult } from '../../../lambdas/status/cancel';
import { handleStatusRequest } from '../../../lambdas/status/http';

/** STATUS_PORT, else 8010 (0 picks a free port). */
export function statusPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.STATUS_PORT;
  if (raw === undefined || raw.trim() === '') return 8010;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`STATUS_PORT=${raw} is not a port`);
  return port;
}

export interface StatusEndpoint {
  /** Base URL, e.g. `http://127.0.0.1:8010`; lookups are `${url}/deliveries/{key}`. */
  readonly url: string;
  close(): Promise<void>;
}

export interface StatusEndpointOptions {
  readonly port: number;
  readonly lookup: (key: string) => Promise<DeliveryReport>;
  /** Called with a lookup that failed for another reason than a bad key (the answer is a 503). */
  readonly onError?: (error: unknown) => void;
  /** DELETE: cancels a key. @default none: DELETE is answered 405 */
  readonly cancel?: (key: string) => Promise<CancelResult>;
}

/** Who a local cancel is recorded as: the local server authenticates nobody. */
export const LOCAL_CANCELLER = 'local (unauthenticated)';

export function startStatusEndpoint(options: StatusEndpointOptions): Promise<StatusEndpoint> {
  const server = createServer((request, response) => {
    // The path as sent, without a query string.
    const rawPath = (request.url ?? '/').split('?')[0];
    void handleStatusRequest(
      request.method ?? 'GET',
      rawPath ?? '/',
      options.lookup,
      options.onError,
      options.cancel,
    ).then((answer) => {
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
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
