/** The Signature Version 4 the CLI signs its Lambda REST calls with, checked against the SDK's own signer. */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { sign } from '../../../../lib/cli/aws-rest';

describe('Signature Version 4', () => {
  const bytes = (data: ArrayBuffer | ArrayBufferView | string): Uint8Array | string =>
    typeof data === 'string'
      ? data
      : data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  class Sha256 {
    readonly #hash;
    constructor(secret?: ArrayBuffer | ArrayBufferView | string) {
      this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
    }
    update(data: ArrayBuffer | ArrayBufferView | string): void {
      this.#hash.update(bytes(data));
    }
    digest(): Promise<Uint8Array> {
      return Promise.resolve(new Uint8Array(this.#hash.digest()));
    }
  }

  test.each([
    [
      'a GET with a query (and a session token)',
      'GET',
      '/2015-03-31/event-source-mappings/',
      { FunctionName: 'my-fn', Marker: 'a b/c*' },
      undefined,
      'tok',
    ],
    ['a PUT with a JSON body', 'PUT', '/2015-03-31/event-source-mappings/1b2c-3d', {}, '{"Enabled":true}', undefined],
  ] as const)('signs %s as the SDK does', async (_, method, pathName, query, body, sessionToken) => {
    const credentials = {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken,
    };
    const now = new Date('2026-12-03T08:00:00Z');
    const host = 'lambda.eu-west-1.amazonaws.com';
    const headers = { 'content-type': 'application/json' };
    const ours = await sign(
      { method, host, path: pathName, query, headers, ...(body ? { body } : {}) },
      credentials,
      'eu-west-1',
      'lambda',
      now,
    );
    const sdk = new SignatureV4({ credentials, region: 'eu-west-1', service: 'lambda', sha256: Sha256 });
    const signed = await sdk.sign(
      {
        method,
        protocol: 'https:',
        hostname: host,
        path: pathName,
        query: { ...query },
        headers: { ...headers, host },
        ...(body ? { body } : {}),
      },
      { signingDate: now },
    );
    const signature = (h: Record<string, string | undefined>) =>
      /Signature=([0-9a-f]+)/.exec(h.authorization ?? '')?.[1];
    expect(signature(ours)).toBeDefined();
    expect(signature(ours)).toBe(signature(signed.headers as Record<string, string>));
  });
});
