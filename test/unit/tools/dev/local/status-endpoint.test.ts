/** The local status server's own behaviour (the lookup itself is tested against DynamoDB Local). */
import { startStatusEndpoint, statusPort } from '../../../../../tools/dev/local/status-endpoint';
import { startCancellingEndpoint } from '../../../helpers';

const lookup = async (key: string) => ({ key, status: 'sent' as const, events: [] });

test('a port already in use is refused naming STATUS_PORT', async () => {
  const first = await startStatusEndpoint({ port: 0, lookup });
  try {
    const port = Number(new URL(first.url).port);
    await expect(startStatusEndpoint({ port, lookup })).rejects.toThrow(
      `The status port ${port} is in use: stop what holds it, or set STATUS_PORT to another port`,
    );
  } finally {
    await first.close();
  }
});

test('it serves GET /deliveries/{key}, ignoring a query string', async () => {
  const server = await startStatusEndpoint({ port: 0, lookup });
  try {
    const response = await fetch(`${server.url}/deliveries/order-42?x=1`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ key: 'order-42', status: 'sent', events: [] });
  } finally {
    await server.close();
  }
});

test('STATUS_PORT picks the port; 8010 without it; anything else is refused', () => {
  expect(statusPort({})).toBe(8010);
  expect(statusPort({ STATUS_PORT: '9000' })).toBe(9000);
  expect(() => statusPort({ STATUS_PORT: 'eighty' })).toThrow('STATUS_PORT=eighty is not a port');
});

test('as deployed, the status path only reads and the cancel path only cancels', async () => {
  const { server, cancelled } = await startCancellingEndpoint(lookup);
  try {
    expect(server.cancelUrl).toBe(`${server.url}/cancel`);
    const refused = await fetch(`${server.url}/deliveries/order-42`, { method: 'DELETE' });
    expect(refused.status).toBe(405);
    expect(cancelled).toEqual([]);
    const read = await fetch(`${server.cancelUrl}/deliveries/order-42`);
    expect(read.status).toBe(405);
    const cancel = await fetch(`${server.cancelUrl}/deliveries/order%2F42`, { method: 'DELETE' });
    expect(cancel.status).toBe(200);
    expect(cancelled).toEqual(['order/42']);
  } finally {
    await server.close();
  }
});

const ROLE = 'arn:aws:iam::123456789012:role/ops';
const TEAMS = {
  billing: { statusReaders: [], cancelers: [ROLE] },
  audit: { statusReaders: [ROLE], cancelers: [] },
  security: { statusReaders: [], cancelers: [] },
};

/** A server with the three teams whose lookups and cancels say which key of which team they were asked. */
async function teamServer() {
  const asked: string[] = [];
  const named = (key: string, team?: string) => (team !== undefined ? `${team}#${key}` : key);
  const server = await startStatusEndpoint({
    port: 0,
    lookup: async (key, team) => {
      asked.push(`GET ${named(key, team)}`);
      return { key: named(key, team), status: 'sent', events: [] };
    },
    cancel: async (key, team) => {
      asked.push(`DELETE ${named(key, team)}`);
      return { outcome: 'cancelled', report: { key: named(key, team), status: 'cancelled', events: [] } };
    },
    teams: TEAMS,
  });
  return { server, asked };
}

test('a team with status readers or cancellers has its own URLs under /teams/<name>: a cancel URL with cancellers only', async () => {
  const { server } = await teamServer();
  try {
    expect(server.teams).toEqual({
      billing: { statusUrl: `${server.url}/teams/billing`, cancelUrl: `${server.url}/teams/billing/cancel` },
      audit: { statusUrl: `${server.url}/teams/audit` },
    });
  } finally {
    await server.close();
  }
});

test("a team's URLs answer for its keys whatever the query, and 403 for another team's, as its alias does", async () => {
  const { server, asked } = await teamServer();
  try {
    const read = await fetch(`${server.teams.billing!.statusUrl}/deliveries/order-42`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ key: 'billing#order-42' });
    const same = await fetch(`${server.teams.billing!.statusUrl}/deliveries/order-42?team=billing`);
    expect(same.status).toBe(200);
    const other = await fetch(`${server.teams.billing!.statusUrl}/deliveries/order-42?team=security`);
    expect(other.status).toBe(403);
    expect(await other.json()).toEqual({
      message: `This URL answers for team billing's keys only, not team "security"'s`,
    });
    const cancelOther = await fetch(`${server.teams.billing!.cancelUrl}/deliveries/order-42?team=audit`, {
      method: 'DELETE',
    });
    expect(cancelOther.status).toBe(403);
    const cancel = await fetch(`${server.teams.billing!.cancelUrl}/deliveries/order%2F42`, { method: 'DELETE' });
    expect(cancel.status).toBe(200);
    expect(asked).toEqual(['GET billing#order-42', 'GET billing#order-42', 'DELETE billing#order/42']);
  } finally {
    await server.close();
  }
});

test('a team without cancellers has no cancel path, a team listing nobody no URLs, and a status URL refuses a DELETE', async () => {
  const { server, asked } = await teamServer();
  try {
    const noCancel = await fetch(`${server.url}/teams/audit/cancel/deliveries/order-42`, { method: 'DELETE' });
    expect(noCancel.status).toBe(404);
    expect((await fetch(`${server.url}/teams/security/deliveries/order-42`)).status).toBe(404);
    expect((await fetch(`${server.url}/teams/nobody/deliveries/order-42`)).status).toBe(404);
    const deleted = await fetch(`${server.teams.billing!.statusUrl}/deliveries/order-42`, { method: 'DELETE' });
    expect(deleted.status).toBe(405);
    expect(asked).toEqual([]);
  } finally {
    await server.close();
  }
});

test("the pipeline's own URLs still take ?team= beside the teams' URLs", async () => {
  const { server, asked } = await teamServer();
  try {
    expect((await fetch(`${server.url}/deliveries/order-42?team=security`)).status).toBe(200);
    expect((await fetch(`${server.cancelUrl}/deliveries/order-42?team=audit`, { method: 'DELETE' })).status).toBe(200);
    expect(asked).toEqual(['GET security#order-42', 'DELETE audit#order-42']);
  } finally {
    await server.close();
  }
});
