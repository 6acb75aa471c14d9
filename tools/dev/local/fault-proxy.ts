/**
 * A reverse proxy on 127.0.0.1 that sits in front of one local HTTP service (the SES emulator,
 * DynamoDB Local, fauxqs) and fails on demand. Point the SDK client's `endpoint` at the proxy
 * and switch its behaviour while a test runs:
 *
 * - {@link pass}: forward unchanged;
 * - {@link down}: drop the connection without any response (an outage / connection reset);
 * - {@link status}: answer with a given status, headers and body, without forwarding
 *   (presets: {@link sesThrottle}, {@link sesInternalFailure}, {@link dynamoDbThrottle});
 * - {@link delay}: wait, then apply another behaviour (forward by default);
 * - {@link forwardThenReset}: forward, let the service process the request, then drop the
 *   client's connection before it sees the answer: the ambiguous case (the email was sent,
 *   the caller saw a network error); an optional hook runs in between (the chaos tests kill
 *   the calling process there, after SES accepted the email and before its answer arrives);
 * - a {@link Chooser} function picking a behaviour per request, e.g. every second request, or
 *   only SendEmail.
 *
 * Every request is recorded with the behaviour applied, for assertions.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { loopbackAgent } from './loopback-agent';
import { once } from 'node:events';
import type { Socket } from 'node:net';

export type Behaviour =
  | { readonly kind: 'pass' }
  | { readonly kind: 'down' }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: string;
    }
  | { readonly kind: 'delay'; readonly ms: number; readonly then: Behaviour }
  | { readonly kind: 'forwardThenReset'; readonly beforeReset?: BeforeReset };

/** The service's answer, as the proxy received it and the client will never see it. */
export interface ForwardedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: Buffer;
}

/** Runs after the service answered and before the client's connection is dropped; awaited. */
export type BeforeReset = (answer: ForwardedAnswer) => void | Promise<void>;

export type BehaviourKind = Behaviour['kind'];

/** What a {@link Chooser} knows about a request. The body has been read in full. */
export interface ProxyRequest {
  /** 0-based position among all requests this proxy has received (not reset by resetLog). */
  readonly index: number;
  readonly method: string;
  /** Path and query, e.g. `/v2/email/outbound-emails`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The AWS operation, when it can be told: "SendEmail", "PutItem", "Publish", ... */
  readonly operation: string | undefined;
}

/** Picks the behaviour for one request. */
export type Chooser = (request: ProxyRequest) => Behaviour;

/** One request as the proxy handled it. */
export interface ProxyLogEntry {
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly operation: string | undefined;
  /** The behaviour applied (for a delay: "delay"; its follow-up is in `then`). */
  readonly behaviour: BehaviourKind;
  readonly then?: BehaviourKind;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give it to the SDK client as `endpoint`. */
  readonly endpoint: string;
  readonly port: number;
  /** The service behind the proxy. */
  readonly target: string;
  /** Sets what happens to the requests from now on: one behaviour for all, or a chooser. */
  set(mode: Behaviour | Chooser): void;
  /** Requests received since the last {@link FaultProxy.resetLog}, by behaviour applied. */
  counts(): Readonly<Record<BehaviourKind, number>> & { readonly total: number };
  /** Requests received since the last {@link FaultProxy.resetLog}, oldest first. */
  log(): readonly ProxyLogEntry[];
  resetLog(): void;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** Base URL of the service, e.g. the SES emulator's endpoint. Plain http only. */
  readonly target: string;
  /** Port on 127.0.0.1; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Behaviour at start. @default pass() */
  readonly mode?: Behaviour | Chooser;
}

// ---------------------------------------------------------------------------------------------
// Behaviours

export const pass = (): Behaviour => ({ kind: 'pass' });

/** Destroys the connection without a response (the SDK sees a reset / "socket hang up"). */
export const down = (): Behaviour => ({ kind: 'down' });

/** Answers without forwarding. An object body is sent as JSON. */
export function status(
  code: number,
  headers: Readonly<Record<string, string>> = {},
  body: string | object = '',
): Behaviour {
  return { kind: 'status', status: code, headers, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/**
 * Waits, then applies `then`. The request goes on even if the client gave up meanwhile, as a
 * slow network would deliver it: a write can still happen after the caller's timeout.
 */
export function delay(ms: number, then: Behaviour = pass()): Behaviour {
  return { kind: 'delay', ms, then };
}

/**
 * Forwards, waits for the service's answer, then destroys the client's connection instead.
 * `beforeReset`, when given, is called with that answer first and awaited. @default no hook
 */
export const forwardThenReset = (beforeReset?: BeforeReset): Behaviour =>
  beforeReset ? { kind: 'forwardThenReset', beforeReset } : { kind: 'forwardThenReset' };

/** SES v2 throttling: the SDK raises `TooManyRequestsException` (HTTP 429). */
export const sesThrottle = (): Behaviour =>
  status(
    429,
    { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException' },
    { message: 'Maximum sending rate exceeded.' },
  );

/** An SES v2 server-side failure: the SDK raises an `InternalFailure` service error (HTTP 500). */
export const sesInternalFailure = (): Behaviour =>
  status(
    500,
    { 'content-type': 'application/json', 'x-amzn-errortype': 'InternalFailure' },
    { message: 'An internal failure occurred.' },
  );

/** DynamoDB throttling: the SDK raises `ProvisionedThroughputExceededException` (HTTP 400). */
export const dynamoDbThrottle = (): Behaviour => {
  const type = 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException';
  return status(
    400,
    { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': type },
    {
      __type: type,
      message: 'The level of configured provisioned throughput for the table was exceeded.',
    },
  );
};

/** Applies `failure` to every `n`th request (n = 2: the 2nd, 4th, ...) and passes the rest. */
export function everyNth(n: number, failure: Behaviour): Chooser {
  return (request) => ((request.index + 1) % n === 0 ? failure : pass());
}

/** Applies `failure` to requests for one operation (e.g. "SendEmail") and passes the rest. */
export function onlyOperation(operation: string, failure: Behaviour): Chooser {
  return (request) => (request.operation === operation ? failure : pass());
}

// ---------------------------------------------------------------------------------------------
// Telling the operation

const SES_V2_ROUTES: readonly (readonly [method: string, path: RegExp, operation: string])[] = [
  ['POST', /^\/v2\/email\/outbound-emails\/?$/, 'SendEmail'],
  ['POST', /^\/v2\/email\/outbound-bulk-emails\/?$/, 'SendBulkEmail'],
  ['GET', /^\/v2\/email\/account\/?$/, 'GetAccount'],
  ['POST', /^\/v2\/email\/templates\/?$/, 'CreateEmailTemplate'],
  ['GET', /^\/v2\/email\/templates\/[^/]+\/?$/, 'GetEmailTemplate'],
];

function operationOf(method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): string | undefined {
  // JSON protocols (DynamoDB, SQS): "X-Amz-Target: DynamoDB_20120810.PutItem".
  const target = headers['x-amz-target'];
  if (typeof target === 'string') return target.slice(target.lastIndexOf('.') + 1);
  const pathname = path.split('?')[0] ?? path;
  for (const [routeMethod, pattern, operation] of SES_V2_ROUTES) {
    if (method === routeMethod && pattern.test(pathname)) return operation;
  }
  // Query protocol (SNS, SES v1): "Action=Publish" in a form body.
  if (String(headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
    return new URLSearchParams(body.toString('utf8')).get('Action') ?? undefined;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The proxy

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade']);

interface UpstreamResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

async function readBody(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (target.protocol !== 'http:') throw new Error(`fault proxy: only http targets, got ${options.target}`);
  // Pooled connections, each closed long before the upstream would close it (loopback-agent.ts).
  const agent = loopbackAgent();
  let mode: Behaviour | Chooser = options.mode ?? pass();
  let nextIndex = 0;
  let entries: ProxyLogEntry[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  const forward = async (request: ProxyRequest): Promise<UpstreamResponse> => {
    const upstream = httpRequest({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: request.method,
      path: request.path,
      headers: request.headers,
      agent,
    });
    upstream.end(request.body);
    const [response] = (await once(upstream, 'response')) as [IncomingMessage];
    const body = await readBody(response);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    return { status: response.statusCode ?? 502, headers, body };
  };

  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const apply = async (
    behaviour: Behaviour,
    request: ProxyRequest,
    respond: (status: number, headers: Record<string, string | string[]>, body: Buffer) => void,
    reset: () => void,
  ): Promise<void> => {
    switch (behaviour.kind) {
      case 'pass': {
        const answer = await forward(request);
        respond(answer.status, answer.headers, answer.body);
        return;
      }
      case 'down':
        reset();
        return;
      case 'status':
        respond(
          behaviour.status,
          { 'x-amzn-requestid': randomUUID(), ...behaviour.headers },
          Buffer.from(behaviour.body, 'utf8'),
        );
        return;
      case 'delay':
        await wait(behaviour.ms);
        await apply(behaviour.then, request, respond, reset);
        return;
      case 'forwardThenReset': {
        const answer = await forward(request);
        await behaviour.beforeReset?.(answer);
        reset();
        return;
      }
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const request: ProxyRequest = {
        index: nextIndex++,
        method,
        path,
        headers: req.headers,
        body,
        operation: operationOf(method, path, req.headers, body),
      };
      const behaviour = typeof mode === 'function' ? mode(request) : mode;
      entries.push({
        index: request.index,
        method,
        path,
        operation: request.operation,
        behaviour: behaviour.kind,
        ...(behaviour.kind === 'delay' ? { then: behaviour.then.kind } : {}),
      });
      const reset = (): void => {
        req.socket.destroy();
      };
      const respond = (code: number, headers: Record<string, string | string[]>, payload: Buffer): void => {
        if (res.destroyed) return;
        res.writeHead(code, { ...headers, 'content-length': String(payload.length) });
        res.end(payload);
      };
      try {
        await apply(behaviour, request, respond, reset);
      } catch {
        // The service itself is unreachable or failed mid-answer: the client sees a reset too.
        reset();
      }
    })();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  // Idle client connections stay open longer than a client keeps them unused (close() destroys
  // them), so a request never goes out on a connection the proxy is just closing.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fault proxy: no TCP address');
  const port = address.port;

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    target: target.origin,
    set: (next) => {
      mode = next;
    },
    counts: () => {
      const result: Record<BehaviourKind, number> & { total: number } = {
        pass: 0,
        down: 0,
        status: 0,
        delay: 0,
        forwardThenReset: 0,
        total: entries.length,
      };
      for (const entry of entries) result[entry.behaviour] += 1;
      return result;
    },
    log: () => [...entries],
    resetLog: () => {
      entries = [];
    },
    close: () => {
      closing ??= (async () => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        await closed;
      })();
      return closing;
    },
  };
}
