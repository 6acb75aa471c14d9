/**
 * The local layers' forwarding agent (tools/dev/local/loopback-agent.ts) against a real HTTP server on
 * loopback: requests one after another share one connection, and an unused connection is closed by
 * the agent after LOOPBACK_IDLE_MS, before the server's own keep-alive timeout (Node's 5 s) could
 * close it under a request.
 */
import { createServer, request, type Agent } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { LOOPBACK_IDLE_MS, loopbackAgent } from '../../../../../tools/dev/local/loopback-agent';

function get(agent: Agent, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test('requests share a pooled connection, closed by the agent after LOOPBACK_IDLE_MS unused', async () => {
  const connections: { socket: Socket; closedAt?: number }[] = [];
  const server = createServer((_, res) => res.end('ok'));
  server.on('connection', (socket: Socket) => {
    const entry: { socket: Socket; closedAt?: number } = { socket };
    connections.push(entry);
    socket.on('close', () => (entry.closedAt = Date.now()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = loopbackAgent();
  try {
    for (let i = 0; i < 5; i += 1) expect(await get(agent, port)).toBe(200);
    expect(connections).toHaveLength(1);
    const idleFrom = Date.now();
    expect(server.keepAliveTimeout).toBeGreaterThan(LOOPBACK_IDLE_MS * 2);
    while (connections[0]!.closedAt === undefined && Date.now() - idleFrom < server.keepAliveTimeout) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const closedAfter = connections[0]!.closedAt! - idleFrom;
    expect(closedAfter).toBeGreaterThanOrEqual(LOOPBACK_IDLE_MS - 100);
    expect(closedAfter).toBeLessThan(server.keepAliveTimeout - 1000);
  } finally {
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
