/**
 * The two IAM-authenticated URLs of the send ledger as plain request and response values, shared
 * by the status and cancel functions (Lambda function URLs) and the local status server:
 *
 * - The status URL, `GET /deliveries/{key}`: 200 and a DeliveryReport for every valid key,
 *   `unknown` included (the answer is the same shape whatever the key's fate, and a key nobody has
 *   sent yet is a fact about the key, not a missing resource). Nothing else: a DELETE there is
 *   405, whoever asks, as reading never allows a cancel.
 * - The cancel URL, `DELETE /deliveries/{key}` (cancel.ts): 200 and `{ outcome, report }` when the
 *   key is cancelled (now, or already: twice is harmless); 409 and the same shape when it is too
 *   late (claimed, in progress or sent). Only the cancel principals may call it: IAM decides that
 *   on the URL, never this code.
 * - Either: `?team=NAME` names the team that published the key (its namespace, `<team>#<key>`,
 *   kernel/teams.ts); without it, the key as given. A team's own URL (the functions' alias
 *   `team-<name>`) answers for that team's keys whatever the query, and 403 for another team. 400 for a key that cannot be a dedupe key or a
 *   team that cannot be one (the body names the rule), 404 for any other path, 405 for another
 *   method, 503 when the tables cannot be read (the caller may retry).
 */
import type { CancelResult } from './cancel';
import { DELIVERIES_PATH, InvalidKeyError, InvalidTeamError } from './lookup';
import type { DeliveryReport } from '../kernel/ledger/schema';

export interface StatusResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

function json(statusCode: number, value: unknown, extra: Record<string, string> = {}): StatusResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...extra },
    body: JSON.stringify(value),
  };
}

/** A request as the URL's handler sees it: the key, and the team when the query names one. */
interface KeyRequest {
  readonly key: string;
  readonly team?: string;
}

/**
 * Which team a URL answers for: a team's own URL (its alias of the function, granted to that team's
 * readers or cancellers only) answers for that team alone, whatever the query says; the pipeline's
 * URL for the team the query names, or for the bare key.
 */
export interface UrlScope {
  /** The team whose URL this is. @default none: the pipeline's URL */
  readonly team?: string;
}

/**
 * Answers one request of `method` (the only one this URL takes) with `answer(request)`. `target`
 * is the request target as sent: the path (percent-encoded), then the query, if any. The key is
 * everything after `/deliveries/` up to the query, so a key with a `/` works encoded or not.
 */
async function handleKeyRequest(
  method: string,
  target: string,
  only: { readonly method: 'GET' | 'DELETE'; readonly elsewhere?: string },
  answer: (request: KeyRequest) => Promise<StatusResponse>,
  onError: (error: unknown) => void,
  scope: UrlScope = {},
): Promise<StatusResponse> {
  const at = target.indexOf('?');
  const rawPath = at < 0 ? target : target.slice(0, at);
  if (!rawPath.startsWith(DELIVERIES_PATH)) {
    return json(404, { message: `Not found: use ${only.method} ${DELIVERIES_PATH}{key}` });
  }
  if (method !== only.method) {
    const hint = only.elsewhere !== undefined ? ` (${only.elsewhere})` : '';
    return json(
      405,
      { message: `Method ${method} not allowed here: use ${only.method}${hint}` },
      { allow: only.method },
    );
  }
  let key: string;
  try {
    key = decodeURIComponent(rawPath.slice(DELIVERIES_PATH.length));
  } catch {
    return json(400, { message: 'Invalid key: the path is not valid percent-encoding' });
  }
  const asked = at < 0 ? null : new URLSearchParams(target.slice(at + 1)).get('team');
  if (scope.team !== undefined && asked !== null && asked !== scope.team) {
    return json(403, {
      message: `This URL answers for team ${scope.team}'s keys only, not team ${JSON.stringify(asked)}'s`,
    });
  }
  const team = scope.team ?? asked;
  try {
    return await answer({ key, ...(team !== null ? { team } : {}) });
  } catch (error) {
    if (error instanceof InvalidKeyError || error instanceof InvalidTeamError) {
      return json(400, { message: error.message });
    }
    onError(error);
    return json(503, { message: 'The delivery status could not be read; try again' });
  }
}

/** The request target of a function URL's event: its raw path, and its query when it has one. */
export function requestTarget(event: { readonly rawPath: string; readonly rawQueryString?: string }): string {
  return event.rawQueryString ? `${event.rawPath}?${event.rawQueryString}` : event.rawPath;
}

/** The status URL: `GET /deliveries/{key}[?team=NAME]` only. */
export function handleStatusRequest(
  method: string,
  target: string,
  lookup: (key: string, team?: string) => Promise<DeliveryReport>,
  onError: (error: unknown) => void = () => undefined,
  scope: UrlScope = {},
): Promise<StatusResponse> {
  return handleKeyRequest(
    method,
    target,
    { method: 'GET', elsewhere: "a cancel is a DELETE at the pipeline's CancelUrl, granted by grantCancel" },
    async ({ key, team }) => json(200, await lookup(key, team)),
    onError,
    scope,
  );
}

/** The cancel URL: `DELETE /deliveries/{key}[?team=NAME]` only. */
export function handleCancelRequest(
  method: string,
  target: string,
  cancel: (key: string, team?: string) => Promise<CancelResult>,
  onError: (error: unknown) => void = () => undefined,
  scope: UrlScope = {},
): Promise<StatusResponse> {
  return handleKeyRequest(
    method,
    target,
    { method: 'DELETE', elsewhere: "a status is a GET at the pipeline's StatusUrl" },
    async ({ key, team }) => {
      const result = await cancel(key, team);
      return json(result.outcome === 'too-late' ? 409 : 200, result);
    },
    onError,
    scope,
  );
}
