/**
 * The floor for the client-CPU benchmark: per record, the handler's two DynamoDB requests on
 * the normal path (the conditional PutItem that claims the key, the UpdateItem that completes
 * it), signed with @smithy/signature-v4 and sent over one keep-alive node:http agent, with no
 * SDK client, no Powertools and no parsing beyond the SNS MessageId. Bundled as the handler is.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

/** The signer's hash, over node:crypto (HMAC when given a secret). */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench floor: ${name} is not set`);
  return value;
}

const endpoint = new URL(env('AWS_ENDPOINT_URL_DYNAMODB'));
const table = env('IDEMPOTENCY_TABLE_NAME');
const region = env('AWS_REGION');
const sessionToken = process.env.AWS_SESSION_TOKEN;
const signer = new SignatureV4({
  service: 'dynamodb',
  region,
  sha256: NodeSha256,
  credentials: {
    accessKeyId: env('AWS_ACCESS_KEY_ID'),
    secretAccessKey: env('AWS_SECRET_ACCESS_KEY'),
    ...(sessionToken ? { sessionToken } : {}),
  },
});
const agent = new Agent({ keepAlive: true });

async function call(target: string, body: object): Promise<void> {
  const payload = JSON.stringify(body);
  const signed = await signer.sign({
    method: 'POST',
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    port: Number(endpoint.port),
    path: '/',
    query: {},
    headers: {
      host: endpoint.host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDB_20120810.${target}`,
    },
    body: payload,
  });
  await new Promise<void>((resolve, reject) => {
    const req = request(
      { agent, method: 'POST', host: endpoint.hostname, port: endpoint.port, path: '/', headers: signed.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`${target}: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8')}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function claimAndComplete(key: string): Promise<void> {
  const id = { S: `bench-floor#${key}` };
  const nowSeconds = Math.floor(Date.now() / 1000);
  await call('PutItem', {
    TableName: table,
    Item: {
      id,
      expiration: { N: String(nowSeconds + 3600) },
      in_progress_expiration: { N: String(Date.now() + 30_000) },
      status: { S: 'INPROGRESS' },
      validation: { S: createHash('md5').update(key).digest('base64') },
    },
    ConditionExpression: 'attribute_not_exists(#id) OR #expiry < :now',
    ExpressionAttributeNames: { '#id': 'id', '#expiry': 'expiration' },
    ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  await call('UpdateItem', {
    TableName: table,
    Key: { id },
    UpdateExpression: 'SET #status = :status, #data = :data',
    ExpressionAttributeNames: { '#status': 'status', '#data': 'data' },
    ExpressionAttributeValues: { ':status': { S: 'COMPLETED' }, ':data': { S: `{"sesMessageId":"bench-${key}"}` } },
  });
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  await Promise.all(
    event.Records.map((record) => claimAndComplete((JSON.parse(record.body) as { MessageId: string }).MessageId)),
  );
  return { batchItemFailures: [] };
}
