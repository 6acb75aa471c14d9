/**
 * The local pipeline's status endpoint: the status URL, `GET /deliveries/{key}`, and the cancel
 * URL, `DELETE /cancel/deliveries/{key}` (the deployed cancel function has a URL of its own; here
 * it is a path of its own), on a plain node:http server, answering with the same code as the
 * deployed status and cancel functions (lambdas/status/http.ts over lookup.ts and cancel.ts): the
 * status URL refuses a DELETE. A team with URLs of its own (teamOwnUrls: on AWS, the functions'
 * alias `team-<name>`) has them under `/teams/<name>`: `GET /teams/<name>/deliveries/{key}` and,
 * with cancellers, `DELETE /teams/<name>/cancel/deliveries/{key}`, answering for that team's keys
 * whatever the query says and 403 for another team's, as the alias does. No authentication: it
 * listens on 127.0.0.1 only, anyone local may call any of its URLs (there is no IAM to grant a
 * team's URL to its principals), and a cancel is recorded as by `local (unauthenticated)`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryReport } from '../../../lambdas/kernel/ledger/schema';
import type { CancelResult } from '../../../lambdas/status/cancel';
import { handleCancelRequest, handleStatusRequest, type StatusResponse } from '../../../lambdas/status/http';
import { teamOwnUrls, type ResolvedTeam } from '../../../lib/settings';

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

/** The path under which each team's own URLs are served: `/teams/<name>` and `/teams/<name>/cancel`. */
export const LOCAL_TEAMS_PREFIX = '/teams';

/** A team's own URLs on the local server (bases, as `url` and `cancelUrl` are). */
export interface LocalTeamUrls {
  /** `${url}/teams/<name>`: `GET ${statusUrl}/deliveries/{key}` reads the team's keys. */
  readonly statusUrl: string;
  /** `${url}/teams/<name>/cancel`, for a team with cancellers (and a server that cancels). */
  readonly cancelUrl?: string;
}

export interface StatusEndpoint {
  /** Base URL, e.g. `http://127.0.0.1:8010`; lookups are `${url}/deliveries/{key}`. */
  readonly url: string;
  /** The cancel URL's base, `${url}/cancel`: cancels are `DELETE ${cancelUrl}/deliveries/{key}`. */
  readonly cancelUrl: string;
  /** Each team's own URLs, for the teams that have them. */
  readonly teams: Readonly<Record<string, LocalTeamUrls>>;
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
  /** The pipeline's teams: those with URLs of their own (teamOwnUrls) are served them. @default none */
  readonly teams?: Readonly<Record<string, Pick<ResolvedTeam, 'statusReaders' | 'cancelers'>>>;
}

/** Who a local cancel is recorded as: the local server authenticates nobody. */
export const LOCAL_CANCELLER = 'local (unauthenticated)';

/** Which of a team's own URLs the server serves: the status URL always, the cancel URL when it cancels. */
function servedTeams(options: StatusEndpointOptions): Map<string, { readonly cancel: boolean }> {
  const served = new Map<string, { readonly cancel: boolean }>();
  for (const [name, team] of Object.entries(options.teams ?? {})) {
    const own = teamOwnUrls(team);
    if (own.status) served.set(name, { cancel: own.cancel && options.cancel !== undefined });
  }
  return served;
}

/**
 * Answers one request: under `/teams/<name>` as that team's URLs (scoped to the team), else as the
 * pipeline's. A team without URLs of its own, or a path nobody serves, is answered 404.
 */
function answerRequest(
  options: StatusEndpointOptions,
  teams: ReadonlyMap<string, { readonly cancel: boolean }>,
  method: string,
  target: string,
): Promise<StatusResponse> {
  let rest = target;
  let scope: { readonly team?: string } = {};
  let cancels = options.cancel !== undefined;
  const teamPath = new RegExp(`^${LOCAL_TEAMS_PREFIX}/([^/?]+)(?=[/?]|$)`).exec(target);
  const team = teamPath ? teams.get(teamPath[1]!) : undefined;
  if (teamPath && team) {
    rest = target.slice(teamPath[0].length);
    scope = { team: teamPath[1]! };
    cancels = team.cancel;
  }
  if (cancels && options.cancel && rest.startsWith(`${LOCAL_CANCEL_PREFIX}/`)) {
    return handleCancelRequest(method, rest.slice(LOCAL_CANCEL_PREFIX.length), options.cancel, options.onError, scope);
  }
  return handleStatusRequest(method, rest, options.lookup, options.onError, scope);
}

export function startStatusEndpoint(options: StatusEndpointOptions): Promise<StatusEndpoint> {
  const teams = servedTeams(options);
  const server = createServer((request, response) => {
    // The request target as sent: the path, then the query (`?team=NAME`).
    const answered = answerRequest(options, teams, request.method ?? 'GET', request.url ?? '/');
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
      const url = `http://127.0.0.1:${port}`;
      const teamUrls = [...teams].map(([name, served]): [string, LocalTeamUrls] => {
        const statusUrl = `${url}${LOCAL_TEAMS_PREFIX}/${name}`;
        return [name, { statusUrl, ...(served.cancel ? { cancelUrl: `${statusUrl}${LOCAL_CANCEL_PREFIX}` } : {}) }];
      });
      resolve({
        url,
        cancelUrl: `${url}${LOCAL_CANCEL_PREFIX}`,
        teams: Object.fromEntries(teamUrls),
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
