/**
 * Which dead-letter queues `verify` looks into: the pipeline's, and the callbacks DLQ where there are
 * callbacks; which SES tenants it asks about, and the GetTenant calls it makes.
 */
import { GetTenantCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
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

  test('one SES v2 GetTenant per tenant, by its name, and the SendingStatus it answers', async () => {
    const sent: unknown[] = [];
    const answers: Record<string, object> = {
      'Pipe-billing': { Tenant: { TenantName: 'Pipe-billing', SendingStatus: 'DISABLED' } },
      'Pipe-security': { Tenant: { TenantName: 'Pipe-security' } },
    };
    const ses = {
      send: async (command: unknown) => {
        sent.push(command);
        const name = (command as GetTenantCommand).input.TenantName ?? '';
        return answers[name] ?? {};
      },
    } as unknown as Pick<SESv2Client, 'send'>;
    const statuses = await tenantStatuses(ses, [
      { team: 'billing', tenantName: 'Pipe-billing' },
      { team: 'security', tenantName: 'Pipe-security' },
    ]);
    expect(sent.every((c) => c instanceof GetTenantCommand)).toBe(true);
    expect(sent.map((c) => (c as GetTenantCommand).input)).toEqual([
      { TenantName: 'Pipe-billing' },
      { TenantName: 'Pipe-security' },
    ]);
    expect(statuses).toEqual([
      { team: 'billing', tenantName: 'Pipe-billing', sendingStatus: 'DISABLED' },
      { team: 'security', tenantName: 'Pipe-security' },
    ]);
  });
});
