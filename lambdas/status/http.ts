/**
 * `GET /deliveries/{key}` and `DELETE /deliveries/{key}` (cancel, see cancel.ts) as plain
 * request and response values, shared by the status function (Lambda function URL) and the
 * local status server.
 *
 * - 200 and a DeliveryReport for every valid key, `unknown` included: the
 *   answer is the same shape whatever the key's fate, and a key nobody has
 *   sent yet is a fact about the key, not a missing resource.
 * - 400 for a key that cannot be a dedupe key (the body names the rule).
 * - DELETE: 200 and `{ outcome, report }` when the key is cancelled (now, or already: twice is
 *   harmless); 409 and the same shape when it is too late (claimed, in progress or sent).
 * - 403 for a DELETE by a caller who may read but not cancel (authorize.ts).
 * - 404 for any other path, 405 for any other method.
 * - 503 when the tables cannot be read (the caller may retry).
 */
import { CancelNotAllowedError } from './authorize';
import type { CancelResult } from './cancel';
import { DELIVERIES_PATH, InvalidKeyError } from './lookup';
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

/**
 * Answers one request. `rawPath` is the path as sent (percent-encoded); the
 * key is everything after `/deliveries/`, so a key with a `/` works encoded or not.
 */
export async function handleStatusRequest(
  method: string,
  rawPath: string,
  lookup: (key: string) => Promise<DeliveryReport>,
  onError: (error: unknown) => void = () => undefined,
  /** DELETE: cancels the key. @default none: DELETE is not allowed */
  cancel?: (key: string) => Promise<CancelResult>,
): Promise<StatusResponse> {
  if (!rawPath.startsWith(DELIVERIES_PATH)) {
    return json(404, { message: `Not found: use GET ${DELIVERIES_PATH}{key}` });
  }
  const allowed = cancel ? 'GET, DELETE' : 'GET';
  if (method !== 'GET' && !(method === 'DELETE' && cancel)) {
    return json(405, { message: `Method ${method} not allowed: use ${allowed}` }, { allow: allowed });
  }
  let key: string;
  try {
    key = decodeURIComponent(rawPath.slice(DELIVERIES_PATH.length));
  } catch {
    return json(400, { message: 'Invalid key: the path is not valid percent-encoding' });
  }
  try {
    if (method === 'DELETE' && cancel) {
      const result = await cancel(key);
      return json(result.outcome === 'too-late' ? 409 : 200, result);
    }
    return json(200, await lookup(key));
  } catch (error) {
    if (error instanceof InvalidKeyError) return json(400, { message: error.message });
    if (error instanceof CancelNotAllowedError) return json(403, { message: error.message });
    onError(error);
    return json(503, { message: 'The delivery status could not be read; try again' });
  }
}
