/**
 * Signature Version 4 for the few AWS requests the package sends without an SDK client of their own
 * (the CLI's Lambda and STS calls, cli/aws-rest.ts; the signed DELETE of a cancel, status-url.ts):
 * the SDK's own signer, `@smithy/signature-v4`, with SHA-256 from node:crypto.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials as the SDK's providers give them. */
export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** A request to sign; `path` is percent-encoded as sent (the signer encodes it once more, as every service but S3 wants). */
export interface RequestToSign {
  readonly method: string;
  readonly protocol: string;
  /** Host name and, when not the protocol's default, `:port`: the `host` header signed. */
  readonly host: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Who signs, for which service and region, and when. */
export interface Signer {
  readonly credentials: SigningCredentials;
  readonly region: string;
  readonly service: string;
  /** @default new Date() */
  readonly now?: Date;
}

type Data = ArrayBuffer | ArrayBufferView | string;

const bytes = (data: Data): Uint8Array | string =>
  typeof data === 'string'
    ? data
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** SHA-256 (HMAC-SHA256 with a secret) from node:crypto, as the signer takes a checksum. */
class Sha256 {
  readonly #secret: Data | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: Data) {
    this.#secret = secret;
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.#secret));
  }
  update(data: Data): void {
    this.#hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
}

/**
 * The headers to send with `request`, signed: the request's own (names in lower case), `host`,
 * `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` with a session, and `authorization`.
 */
export async function signedRequestHeaders(request: RequestToSign, signer: Signer): Promise<Record<string, string>> {
  const sigv4 = new SignatureV4({
    credentials: signer.credentials,
    region: signer.region,
    service: signer.service,
    sha256: Sha256,
  });
  const [hostname = request.host, port] = request.host.split(':');
  const signed = await sigv4.sign(
    {
      method: request.method.toUpperCase(),
      protocol: request.protocol,
      hostname,
      ...(port ? { port: Number(port) } : {}),
      path: request.path,
      query: { ...request.query },
      headers: {
        ...Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
        host: request.host,
      },
      ...(request.body !== undefined ? { body: request.body } : {}),
    },
    { signingDate: signer.now ?? new Date() },
  );
  return { ...signed.headers };
}
