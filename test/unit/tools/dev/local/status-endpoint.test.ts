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
