/**
 * The credential chain the Lambda bundles use in place of the SDK's default one
 * (lambdas/runtime/lambda-credentials.ts): Lambda's environment first, then a container endpoint.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultProvider } from '../../../../lambdas/runtime/lambda-credentials';

const VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CREDENTIAL_EXPIRATION',
  'AWS_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
] as const;

const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

function setEnv(values: Partial<Record<(typeof VARIABLES)[number], string>>): void {
  for (const name of VARIABLES) delete process.env[name];
  Object.assign(process.env, values);
}

afterEach(() => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** A container credentials endpoint on loopback, handing out credentials that expire in `expiresInMs`; counts its requests. */
async function credentialsEndpoint(
  expiresInMs: number,
): Promise<{ url: string; requests: () => number; close: () => void }> {
  const body = {
    AccessKeyId: 'AKIDCONTAINER',
    SecretAccessKey: 'secret',
    Token: 'token',
    Expiration: new Date(Date.now() + expiresInMs).toISOString(),
  };
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/creds`, requests: () => requests, close: () => server.close() };
}

describe('the Lambda credential chain', () => {
  test('takes the execution role credentials Lambda puts in the environment, session token included', async () => {
    setEnv({ AWS_ACCESS_KEY_ID: 'AKIDLAMBDA', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' });

    const credentials = await defaultProvider()();

    expect(credentials).toMatchObject({ accessKeyId: 'AKIDLAMBDA', secretAccessKey: 'secret', sessionToken: 'token' });
  });

  test('takes the environment credentials even when AWS_PROFILE is set: shared config files are not read', async () => {
    setEnv({ AWS_ACCESS_KEY_ID: 'AKIDLAMBDA', AWS_SECRET_ACCESS_KEY: 'secret', AWS_PROFILE: 'developer' });

    await expect(defaultProvider()()).resolves.toMatchObject({ accessKeyId: 'AKIDLAMBDA' });
  });

  test('without environment credentials, fetches them from the container endpoint, once while they are fresh', async () => {
    const endpoint = await credentialsEndpoint(60 * 60 * 1000);
    try {
      setEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: endpoint.url });
      const provider = defaultProvider();

      const first = await provider();
      const second = await provider();

      expect(first).toMatchObject({ accessKeyId: 'AKIDCONTAINER', sessionToken: 'token' });
      expect(second.accessKeyId).toBe('AKIDCONTAINER');
      expect(endpoint.requests()).toBe(1);
    } finally {
      endpoint.close();
    }
  });

  test('fetches container credentials again when they are about to expire', async () => {
    const endpoint = await credentialsEndpoint(60 * 1000);
    try {
      setEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: endpoint.url });
      const provider = defaultProvider();

      await provider();
      await provider();

      // Credentials within the refresh window count as expired: each use fetches them anew.
      expect(endpoint.requests()).toBeGreaterThanOrEqual(2);
    } finally {
      endpoint.close();
    }
  });

  test('with neither, fails naming the sources it tried', async () => {
    setEnv({});

    await expect(defaultProvider()()).rejects.toThrow(/AWS_CONTAINER_CREDENTIALS_FULL_URI/);
  });
});
