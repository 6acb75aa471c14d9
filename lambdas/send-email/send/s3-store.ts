/**
 * The attachments bucket through S3's REST API: HeadObject and GetObject (If-Match), the only calls
 * the send function is granted. The two requests are signed by the SDK's own signer
 * (`@smithy/signature-v4`, already in the bundle for the other clients) and sent through the same
 * HTTP handler as the clients (runtime/clients.ts): an S3 client would add about 100 KiB to the
 * bundle and its load time to every cold start (BENCHMARKS.md, section 4). send/attachments.ts
 * builds the store on the first object.
 *
 * What the S3 client did and this keeps: the region and credentials of the function's chain
 * (runtime/lambda-credentials.ts), `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` (path-style for an IP
 * or localhost endpoint, as the SDK), three attempts for a network error, a timeout, throttling or a
 * 5xx, and errors named as the SDK names them (NotFound, NoSuchKey, AccessDenied,
 * PreconditionFailed) with `$metadata.httpStatusCode`.
 */
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { httpHandler } from '../../runtime/clients';
import { defaultProvider } from '../../runtime/lambda-credentials';

/** What the send stage reads of the bucket (S3 in production, a fake in tests). */
export interface ObjectStore {
  /** The object's ETag and size; throws S3's error (NotFound, AccessDenied, ...). */
  head(key: string): Promise<{ readonly etag: string; readonly size: number }>;
  /** The object's bytes, if its ETag is still `etag`; throws S3's error (412 PreconditionFailed if not). */
  get(key: string, etag: string): Promise<Uint8Array>;
}

/** Where and as whom the store reads. @default the function's environment and credential chain */
export interface S3StoreConfig {
  readonly env?: NodeJS.ProcessEnv;
  readonly credentials?: AwsCredentialIdentityProvider;
}

/** Attempts per request, as the S3 client had (`maxAttempts: 3`). */
const MAX_ATTEMPTS = 3;
/** First retry after up to this long (full jitter), doubling: the SDK's standard retry. */
const BASE_DELAY_MS = 100;

/** An error S3 answered with, shaped as the SDK's (name, `$metadata.httpStatusCode`). */
export class S3Error extends Error {
  readonly $metadata: { readonly httpStatusCode: number };
  constructor(name: string, message: string, httpStatusCode: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode };
  }
}

/** The name the SDK gives a status when S3 sends no body (HEAD) or no code. */
function nameOfStatus(status: number): string {
  if (status === 404) return 'NotFound';
  if (status === 403) return 'Forbidden';
  if (status === 412) return 'PreconditionFailed';
  return `Http${status}`;
}

/** RFC 3986 percent-encoding of a key's segment (S3 signs the path as sent). */
function escapeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

interface Target {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: number | undefined;
  readonly path: string;
}

/** The URL parts of `key` in `bucket`: virtual-hosted, or path-style where the SDK uses it. */
function objectTarget(bucket: string, key: string, region: string, env: NodeJS.ProcessEnv): Target {
  const custom = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const base = new URL(custom ?? `https://s3.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`);
  const dnsBucket = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(bucket);
  const pathStyle = !dnsBucket || isIP(base.hostname.replace(/^\[|\]$/g, '')) !== 0 || base.hostname === 'localhost';
  const basePath = base.pathname.replace(/\/$/, '');
  const objectPath = key.split('/').map(escapeSegment).join('/');
  return {
    protocol: base.protocol,
    hostname: pathStyle ? base.hostname : `${bucket}.${base.hostname}`,
    port: base.port ? Number(base.port) : undefined,
    path: pathStyle ? `${basePath}/${bucket}/${objectPath}` : `${basePath}/${objectPath}`,
  };
}

/**
 * A response body. With its announced length, the chunks are copied into one buffer of that length
 * as they arrive: a file is held once, where collecting the chunks and joining them held it twice at
 * the end of the read (the send function's memory, send/byte-budget.ts).
 */
async function readBody(body: unknown, length?: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  if (length === undefined || !Number.isSafeInteger(length) || length < 0) {
    const chunks: Buffer[] = [];
    for await (const chunk of body as IncomingMessage) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  const bytes = Buffer.allocUnsafe(length);
  let offset = 0;
  for await (const chunk of body as IncomingMessage) {
    const piece = chunk as Buffer;
    if (offset + piece.byteLength > length) throw new Error(`more bytes than the announced ${length}`);
    bytes.set(piece, offset);
    offset += piece.byteLength;
  }
  if (offset !== length) throw new Error(`${offset} bytes of the announced ${length}`);
  return bytes;
}

function retryable(error: unknown): boolean {
  if (!(error instanceof S3Error)) return true; // no answer: network error or timeout
  const status = error.$metadata.httpStatusCode;
  return status >= 500 || status === 429 || error.name === 'SlowDown' || error.name === 'RequestTimeout';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An ObjectStore over `bucket` (S3 answers within `requestTimeoutMs`, three attempts). */
export function createS3Store(bucket: string, requestTimeoutMs: number, config: S3StoreConfig = {}): ObjectStore {
  const env = config.env ?? process.env;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const handler = httpHandler(requestTimeoutMs);
  const signer = new SignatureV4({
    credentials: config.credentials ?? defaultProvider(),
    region,
    service: 's3',
    sha256: Sha256,
    uriEscapePath: false,
  });

  async function once(method: 'HEAD' | 'GET', key: string, headers: Record<string, string>) {
    const target = objectTarget(bucket, key, region, env);
    const host = target.port === undefined ? target.hostname : `${target.hostname}:${target.port}`;
    const request = new HttpRequest({ ...target, method, headers: { ...headers, host }, query: {} });
    const signed = await signer.sign(request);
    const { response } = await handler.handle(signed as HttpRequest);
    const announced = method === 'GET' ? Number(response.headers['content-length']) : undefined;
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    const body = await readBody(response.body, ok ? announced : undefined);
    if (ok) return { headers: response.headers, body };
    const text = body.toString('utf8');
    const name = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? nameOfStatus(response.statusCode);
    const message = /<Message>([^<]+)<\/Message>/.exec(text)?.[1] ?? `${method} ${key}: ${response.statusCode}`;
    throw new S3Error(name, message, response.statusCode);
  }

  async function send(method: 'HEAD' | 'GET', key: string, headers: Record<string, string> = {}) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await once(method, key, headers);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !retryable(error)) throw error;
        await sleep(Math.random() * BASE_DELAY_MS * 2 ** (attempt - 1));
      }
    }
  }

  return {
    async head(key) {
      const answer = await send('HEAD', key);
      return { etag: answer.headers.etag ?? '', size: Number(answer.headers['content-length'] ?? 0) };
    },
    async get(key, etag) {
      const answer = await send('GET', key, { 'if-match': etag });
      return new Uint8Array(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
    },
  };
}
