/** The status function's HTTP routing, shared with the local server: what each request is answered. */
import type { DeliveryReport } from '../../../../lambdas/kernel/ledger/schema';
import { TEAM_NAME, teamKey } from '../../../../lambdas/kernel/teams';
import { handleStatusRequest, requestTarget } from '../../../../lambdas/status/http';
import { InvalidKeyError, InvalidTeamError, keyProblem } from '../../../../lambdas/status/lookup';

describe('handleStatusRequest', () => {
  const report = (key: string): DeliveryReport => ({ key, status: 'delivered', events: [] });
  const lookup = async (key: string, team?: string) => {
    const problem = keyProblem(key);
    if (problem) throw new InvalidKeyError(key, problem);
    if (team !== undefined && !TEAM_NAME.test(team)) throw new InvalidTeamError(team);
    return report(team !== undefined ? teamKey(team, key) : key);
  };

  test('GET /deliveries/{key} answers 200 with the report as JSON, never cached', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/order-42', lookup);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(JSON.parse(answer.body)).toEqual(report('order-42'));
  });

  test('the key is percent-decoded, and a key with a slash works encoded or not', async () => {
    for (const path of ['/deliveries/order%2F42%20%F0%9F%91%8B', '/deliveries/order/42%20%F0%9F%91%8B']) {
      expect(JSON.parse((await handleStatusRequest('GET', path, lookup)).body).key).toBe('order/42 👋');
    }
  });

  test('a key that cannot be a dedupe key answers 400 naming the rule', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/%20order', lookup);
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body).message).toBe('Invalid key " order": must not be empty or start or end with spaces');
  });

  test("?team=NAME reads that team's key; the query never becomes part of the key", async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/order%2F42?team=billing', lookup);
    expect(JSON.parse(answer.body).key).toBe('billing#order/42');
    // Other query parameters are ignored, as before teams.
    expect(JSON.parse((await handleStatusRequest('GET', '/deliveries/order-42?x=1', lookup)).body).key).toBe(
      'order-42',
    );
  });

  test('a team that cannot be a team (or an empty one) answers 400 naming the rule', async () => {
    for (const query of ['team=Billing', 'team=', 'team=a%23b']) {
      const answer = await handleStatusRequest('GET', `/deliveries/order-42?${query}`, lookup);
      expect(answer.statusCode).toBe(400);
      expect(JSON.parse(answer.body).message).toMatch(/^Invalid team ".*": a team name is 1 to 32 lowercase/);
    }
  });

  test("a team's own URL answers for its keys whatever the query, and 403 for another team's", async () => {
    const scope = { team: 'billing' };
    const own = await handleStatusRequest('GET', '/deliveries/order-42', lookup, undefined, scope);
    expect(JSON.parse(own.body).key).toBe('billing#order-42');
    const same = await handleStatusRequest('GET', '/deliveries/order-42?team=billing', lookup, undefined, scope);
    expect(JSON.parse(same.body).key).toBe('billing#order-42');
    const other = await handleStatusRequest('GET', '/deliveries/order-42?team=security', lookup, undefined, scope);
    expect(other.statusCode).toBe(403);
    expect(JSON.parse(other.body).message).toContain("team billing's keys only");
  });

  test("a function URL's event gives its path and query as one request target", () => {
    expect(requestTarget({ rawPath: '/deliveries/k', rawQueryString: 'team=ops' })).toBe('/deliveries/k?team=ops');
    expect(requestTarget({ rawPath: '/deliveries/k', rawQueryString: '' })).toBe('/deliveries/k');
    expect(requestTarget({ rawPath: '/deliveries/k' })).toBe('/deliveries/k');
  });

  test('broken percent-encoding answers 400', async () => {
    const answer = await handleStatusRequest('GET', '/deliveries/%E0%A4%A', lookup);
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body).message).toContain('not valid percent-encoding');
  });

  test('another path answers 404, another method 405', async () => {
    expect((await handleStatusRequest('GET', '/status/order-42', lookup)).statusCode).toBe(404);
    const post = await handleStatusRequest('POST', '/deliveries/order-42', lookup);
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  test('a store that cannot be read answers 503 and reports the error', async () => {
    const seen: unknown[] = [];
    const failure = new Error('ProvisionedThroughputExceededException');
    const answer = await handleStatusRequest(
      'GET',
      '/deliveries/order-42',
      () => Promise.reject(failure),
      (error) => seen.push(error),
    );
    expect(answer.statusCode).toBe(503);
    expect(seen).toEqual([failure]);
  });
});
