/**
 * The functions' SDK clients, each with explicit timeouts: DynamoDB (the store, the ledger, the
 * status lookup) and SQS. Built once per container; the benchmark builds the DynamoDB one the
 * same way. The send function's SES client is its own (send-email/send/email.ts).
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';

/** Connect within 1 s; `throwOnRequestTimeout`, or the SDK only logs a warning when a request runs over. */
export function httpHandler(requestTimeoutMs: number): NodeHttpHandler {
  return new NodeHttpHandler({
    connectionTimeout: 1000,
    requestTimeout: requestTimeoutMs,
    throwOnRequestTimeout: true,
  });
}

/** A DynamoDB client (the ledger reads, the status lookup); `config` adds an endpoint, credentials and the like. */
export function createDynamoDbClient(config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({ requestHandler: httpHandler(3000), maxAttempts: 3, ...config });
}

/**
 * The idempotency store's client: two requests per record, so per-send work counts (BENCHMARKS.md, 6).
 * `cacheMiddleware`: the middleware stack is resolved once per command type instead of on every
 * send, so middleware must be added before the first send (the send function's persistence layer,
 * send-email/claim/persistence.ts, adds its own in its constructor), and a DynamoDBDocumentClient
 * cannot wrap it. Concurrent sends share the cached handler's context; its per-send fields
 * (endpoint, auth scheme) come out the same for every send of this client: one region, one
 * endpoint, one table named plainly.
 */
export function createStoreClient(config: DynamoDBClientConfig = {}): DynamoDBClient {
  return createDynamoDbClient({ cacheMiddleware: true, ...config });
}

/**
 * A client that is built on its first `send`: for the clients only failure paths use (SQS for
 * dead letters and retries, DynamoDB for ledger reads and dead-letter marks), so that a cold
 * start does not pay for resolving their configuration.
 */
export function builtOnFirstSend<C extends { send: (command: never) => Promise<unknown> }>(
  create: () => C,
): Pick<C, 'send'> {
  let client: C | undefined;
  const send = (command: never) => {
    client ??= create();
    return client.send(command);
  };
  return { send: send as C['send'] };
}

/** SQS for dead-lettering and backoffs. The queue URLs are in this region: never let a URL's host redirect the client. */
export function createSqsClient(): SQSClient {
  return new SQSClient({ requestHandler: httpHandler(5000), maxAttempts: 3, useQueueUrlAsEndpoint: false });
}
