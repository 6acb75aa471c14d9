/**
 * `GET /deliveries/{key}` as plain request and response values, shared by the
 * status function (Lambda function URL) and the local status server.
 *
 * - 200 and a DeliveryReport for every valid key, `unknown` included: the
 *   answer is the same shape whatever the key's fate, and a key nobody has
 *   sent yet is a fact about the key, not a missing resource.
 * - 400 for a key that cannot be a dedupe key (the body names the rule).
 * - 404 for any other path, 405 for any other method.
 * - 503 when the tables cannot be read (the caller may retry).
 */
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
): Promise<StatusResponse> {
  if (!rawPath.startsWith(DELIVERIES_PATH)) {
    return json(404, { message: `Not found: use GET ${DELIVERIES_PATH}{key}` });
  }
  if (method !== 'GET') return json(405, { message: `Method ${method} not allowed: use GET` }, { allow: 'GET' });
  let key: string;
  try {
    key = decodeURIComponent(rawPath.slice(DELIVERIES_PATH.length));
  } catch {
    return json(400, { message: 'Invalid key: the path is not valid percent-encoding' });
  }
  try {
    return json(200, await lookup(key));
  } catch (error) {
    if (error instanceof InvalidKeyError) return json(400, { message: error.message });
    onError(error);
    return json(503, { message: 'The delivery status could not be read; try again' });
  }
}
