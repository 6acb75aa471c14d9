/**
 * Which dead-letter queues `verify` looks into: the pipeline's, and the callbacks DLQ where there are
 * callbacks; which SES tenants it asks about, and the GetTenant calls it makes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getTenantRequest, tenantSendingStatus } from '../../../../lib/cli/aws-rest';
import { deadLetterQueues, tenantStatuses, tenantsOf } from '../../../../lib/cli/verify-command';

const outputs = {
  DeadLetterQueueUrl: 'https://sqs/dlq',
  SubscriptionDeadLetterQueueUrl: 'https://sqs/sub-dlq',
  LedgerDeadLetterQueueUrl: 'https://sqs/ledger-dlq',
};

test('without callbacks: the three of the pipeline', () => {
  expect(deadLetterQueues(outputs, 'stack S')).toEqual([
    ['send', 'https://sqs/dlq'],
    ['subscription', 'https://sqs/sub-dlq'],
    ['ledger', 'https://sqs/ledger-dlq'],
  ]);
});

test('with callbacks (the Callbacks output, as JSON text from a stack), the callbacks DLQ too', () => {
  const Callbacks = JSON.stringify({
    QueueUrl: 'https://sqs/cb',
    DeadLetterQueueUrl: 'https://sqs/cb-dlq',
    TableName: 't',
  });
  expect(deadLetterQueues({ ...outputs, Callbacks }, 'stack S').at(-1)).toEqual(['callbacks', 'https://sqs/cb-dlq']);
});

test('an older stack without a subscription DLQ output: only the queues it names', () => {
  expect(deadLetterQueues({ DeadLetterQueueUrl: 'https://sqs/dlq' }, 'stack S')).toEqual([['send', 'https://sqs/dlq']]);
});

describe('SES tenants', () => {
  test("the teams with a tenant, from the Teams output (JSON text in a stack's Endpoints, or an object locally)", () => {
    const Teams = {
      billing: { TopicArn: 'arn:billing', TenantName: 'Pipe-billing' },
      support: { TopicArn: 'arn:support' },
      security: { TopicArn: 'arn:security', TenantName: 'Pipe-security' },
    };
    const expected = [
      { team: 'billing', tenantName: 'Pipe-billing' },
      { team: 'security', tenantName: 'Pipe-security' },
    ];
    expect(tenantsOf({ Teams: JSON.stringify(Teams) })).toEqual(expected);
    expect(tenantsOf({ Teams })).toEqual(expected);
    expect(tenantsOf({ ...outputs })).toEqual([]);
    expect(tenantsOf({ Teams: JSON.stringify({ support: { TopicArn: 'arn:support' } }) })).toEqual([]);
  });

  test('one SES v2 GetTenant per tenant (signed POST /v2/email/tenants/get), by its name, and the SendingStatus it answers', async () => {
    const requests: { method?: string; url?: string; body: string; signed: boolean }[] = [];
    const answers: Record<string, object> = {
      'Pipe-billing': { Tenant: { TenantName: 'Pipe-billing', SendingStatus: 'DISABLED' } },
      'Pipe-security': { Tenant: { TenantName: 'Pipe-security' } },
    };
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        requests.push({
          method: req.method,
          url: req.url,
          body,
          signed: /^AWS4-HMAC-SHA256 /.test(req.headers.authorization ?? ''),
        });
        const name = (JSON.parse(body) as { TenantName: string }).TenantName;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers[name] ?? {}));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const aws = { region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } };
      const statuses = await tenantStatuses(
        (name) => tenantSendingStatus(aws, name, origin),
        [
          { team: 'billing', tenantName: 'Pipe-billing' },
          { team: 'security', tenantName: 'Pipe-security' },
        ],
      );
      expect(requests).toEqual([
        { method: 'POST', url: '/v2/email/tenants/get', body: '{"TenantName":"Pipe-billing"}', signed: true },
        { method: 'POST', url: '/v2/email/tenants/get', body: '{"TenantName":"Pipe-security"}', signed: true },
      ]);
      expect(statuses).toEqual([
        { team: 'billing', tenantName: 'Pipe-billing', sendingStatus: 'DISABLED' },
        { team: 'security', tenantName: 'Pipe-security' },
      ]);
      // On AWS: SES v2's regional endpoint.
      expect(getTenantRequest('eu-west-1', 'Pipe-billing').host).toBe('email.eu-west-1.amazonaws.com');
    } finally {
      server.close();
    }
  });
});
