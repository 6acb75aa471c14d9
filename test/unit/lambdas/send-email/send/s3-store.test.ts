import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createS3Store } from '../../../../../lambdas/send-email/send/s3-store';

type Reply = { status: number; headers?: Record<string, string>; body?: string };

const credentials = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'TOKEN' });

async function s3Stub(replies: Reply[]): Promise<{ server: Server; endpoint: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    const reply = replies.shift() ?? { status: 500 };
    response.writeHead(reply.status, reply.headers ?? {});
    response.end(request.method === 'HEAD' ? undefined : reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function withStore<T>(
  replies: Reply[],
  run: (store: ReturnType<typeof createS3Store>, seen: IncomingMessage[]) => Promise<T>,
) {
  const { server, endpoint, seen } = await s3Stub(replies);
  try {
    const env = { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_S3: endpoint };
    return await run(createS3Store('attachments-bucket', 2000, { env, credentials }), seen);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('S3 object store over signed REST requests', () => {
  test('head sends a signed HEAD for the key, path-style at an IP endpoint, and answers ETag and size', async () => {
    await withStore([{ status: 200, headers: { etag: '"abc"', 'content-length': '1234' } }], async (store, seen) => {
      await expect(store.head('uploads/a b+c.pdf')).resolves.toEqual({ etag: '"abc"', size: 1234 });
      expect(seen[0]?.method).toBe('HEAD');
      expect(seen[0]?.url).toBe('/attachments-bucket/uploads/a%20b%2Bc.pdf');
      expect(seen[0]?.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request/);
      expect(seen[0]?.headers['x-amz-security-token']).toBe('TOKEN');
    });
  });

  test('get sends If-Match with the ETag and answers the bytes', async () => {
    await withStore([{ status: 200, body: 'hello' }], async (store, seen) => {
      const bytes = await store.get('k', '"abc"');
      expect(Buffer.from(bytes).toString()).toBe('hello');
      expect(seen[0]?.headers['if-match']).toBe('"abc"');
      expect(seen[0]?.headers.authorization).toContain('if-match');
    });
  });

  test('a changed object is PreconditionFailed with status 412, not retried', async () => {
    const xml =
      '<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions failed</Message></Error>';
    await withStore([{ status: 412, body: xml }], async (store, seen) => {
      await expect(store.get('k', '"old"')).rejects.toMatchObject({
        name: 'PreconditionFailed',
        $metadata: { httpStatusCode: 412 },
      });
      expect(seen).toHaveLength(1);
    });
  });

  test('a missing object is NotFound on HEAD and NoSuchKey on GET, with status 404', async () => {
    const xml = '<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';
    await withStore([{ status: 404 }, { status: 404, body: xml }], async (store) => {
      await expect(store.head('gone')).rejects.toMatchObject({ name: 'NotFound', $metadata: { httpStatusCode: 404 } });
      await expect(store.get('gone', '"e"')).rejects.toMatchObject({ name: 'NoSuchKey' });
    });
  });

  test('a 5xx is tried three times in all, then thrown', async () => {
    await withStore([{ status: 503 }, { status: 500 }, { status: 503 }], async (store, seen) => {
      await expect(store.head('k')).rejects.toMatchObject({ $metadata: { httpStatusCode: 503 } });
      expect(seen).toHaveLength(3);
    });
  });

  test('a 5xx followed by an answer succeeds', async () => {
    await withStore(
      [{ status: 500 }, { status: 200, headers: { etag: '"e"', 'content-length': '3' } }],
      async (store) => {
        await expect(store.head('k')).resolves.toEqual({ etag: '"e"', size: 3 });
      },
    );
  });
});
