/**
 * The send ledger on the emulators. First its table writes against DynamoDB Local (every
 * arrival order and copies of a lifecycle's events end in the same item, a team's key's item
 * naming its team); then end to end: the
 * real send-email bundle sends through the local SES (configuration set, tags), which publishes
 * SES's events to the ses-events topic, the buffer queue feeds the real ledger bundle, and
 * every mailbox simulator address reaches its status, each change published on the
 * delivery-status topic with its filter attributes.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { SubscribeCommand } from '@aws-sdk/client-sns';
import { parseSesEvent, type ParsedSesEvent } from '../../lambdas/kernel/ledger/events';
import type { DeliveryReport } from '../../lambdas/kernel/ledger/schema';
import { readLedgerItem, recordEvent, type StoredLedgerItem } from '../../lambdas/runtime/ledger-store';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { createResources, type LocalResources } from '../../tools/dev/local/resources';
import { sesEventsFor } from '../../tools/dev/local/ses-front';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { permutations } from '../unit/helpers';
import { email, endpointsFromEnv, startTestPipeline, uniqueName, until, type TestPipeline } from './support';

const endpoints = endpointsFromEnv();

describe('ledger table writes (DynamoDB Local)', () => {
  const clients = emulatorClients(endpoints);
  let resources: LocalResources;
  beforeAll(async () => {
    resources = await createResources(clients, loadLocalSettings(), uniqueName('ledger'));
  });
  afterAll(() => clients.destroy());

  // Recent, so that no item has expired (DynamoDB Local's TTL does delete them); the same for every key.
  const acceptedAt = Date.now();

  /** A lifecycle as the local SES publishes it: Send, Delivery, Complaint (with `tags` beside the dedupe key). */
  function lifecycle(key: string, tags: { Name: string; Value: string }[] = []): ParsedSesEvent[] {
    const send = {
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: ['complaint@simulator.amazonses.com'] },
      EmailTags: [{ Name: 'dedupe-key', Value: key }, ...tags],
    };
    return sesEventsFor(send, `ses-${key}`, 'set', acceptedAt, 'sender').map((event) => {
      const parsed = parseSesEvent(event);
      if (!parsed) throw new Error('unrecorded event type');
      return parsed;
    });
  }

  /** The item without its key (and the index shard its key hashes to), to compare items of different keys. */
  function body(item: StoredLedgerItem | undefined): Record<string, unknown> {
    const rest: Record<string, unknown> = { ...item };
    delete rest.key;
    const outcome = typeof rest.statusShard === 'string' ? rest.statusShard.split('#')[0] : rest.statusShard;
    return { ...rest, statusShard: outcome, eventIds: [...((rest.eventIds as Set<string> | undefined) ?? [])].sort() };
  }

  test('every arrival order, with copies, ends in the same item; in order costs one write per event', async () => {
    const table = resources.ledger.tableName;
    const reference = `in-order-${uniqueName()}`;
    const inOrder = lifecycle(reference);
    expect(inOrder.map((e) => e.event.type)).toEqual(['Send', 'Delivery', 'Complaint']);
    const results = [];
    for (const event of inOrder) results.push(await recordEvent(clients.dynamodb, table, event, 3600));
    expect(results.map((r) => r.requests)).toEqual([1, 1, 1]);
    expect(results.map((r) => [r.previousStatus, r.item.status])).toEqual([
      [undefined, 'sent'],
      ['sent', 'delivered'],
      ['delivered', 'complained'],
    ]);
    const expected = body(await readLedgerItem(clients.dynamodb, table, reference, 0));
    expect(expected).toMatchObject({
      status: 'complained',
      sesMessageId: `ses-${reference}`,
      // The index of keys by outcome (deliveries) files it under its status.
      statusShard: 'complained',
    });

    const orders = permutations([0, 1, 2]);
    await Promise.all(
      orders.map(async (order, n) => {
        const key = `order-${n}-${uniqueName()}`;
        const events = lifecycle(key);
        // Each event twice (an SNS/SQS redelivery), the copy right after the original.
        for (const i of order) {
          const first = await recordEvent(clients.dynamodb, table, events[i] as ParsedSesEvent, 3600);
          const copy = await recordEvent(clients.dynamodb, table, events[i] as ParsedSesEvent, 3600);
          expect(first.recorded).toBe(true);
          expect(copy.recorded).toBe(false);
        }
        const item = await readLedgerItem(clients.dynamodb, table, key, 0);
        expect(body(item)).toEqual(
          JSON.parse(JSON.stringify(expected).replaceAll(`ses-${reference}`, `ses-${key}`)) as unknown,
        );
      }),
    );
  });

  test("a team's key names its team on its item whatever the arrival order, at no extra request", async () => {
    const table = resources.ledger.tableName;
    const tags = [
      { Name: 'dedupe-team', Value: 'billing' },
      { Name: 'dedupe-team-key', Value: 'order-42' },
    ];
    const orders = permutations([0, 1, 2]);
    await Promise.all(
      orders.map(async (order, n) => {
        const key = `team-${n}-${uniqueName()}`;
        const events = lifecycle(key, tags);
        const results = [];
        for (const i of order)
          results.push(await recordEvent(clients.dynamodb, table, events[i] as ParsedSesEvent, 3600));
        // In order, one write per event, as for a key without a team.
        if (n === 0) expect(results.map((r) => r.requests)).toEqual([1, 1, 1]);
        const item = await readLedgerItem(clients.dynamodb, table, key, 0);
        expect(item).toMatchObject({ team: 'billing', teamKey: 'order-42', status: 'complained' });
      }),
    );
    const bare = `bare-${uniqueName()}`;
    for (const event of lifecycle(bare)) await recordEvent(clients.dynamodb, table, event, 3600);
    const item = await readLedgerItem(clients.dynamodb, table, bare, 0);
    expect(item).not.toHaveProperty('team');
    expect(item).not.toHaveProperty('teamKey');
  });
});

describe('end to end: mailbox simulator addresses reach their status', () => {
  let p: TestPipeline;
  afterEach(async () => p?.stop());

  test('success, bounce, complaint, suppressionlist and any other address', async () => {
    p = await startTestPipeline({ ledger: true });
    const { sqs, sns, resources } = p.pipeline;
    const watcher = await sqs.send(new CreateQueueCommand({ QueueName: `${p.name}-status-watch` }));
    const watchUrl = watcher.QueueUrl ?? '';
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: watchUrl, AttributeNames: ['QueueArn'] }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: resources.ledger.deliveryStatusTopicArn,
        Protocol: 'sqs',
        Endpoint: Attributes?.QueueArn ?? '',
        Attributes: { RawMessageDelivery: 'false' },
      }),
    );
    // Each address, its final status and every event SES publishes for it.
    const cases = [
      ['success@simulator.amazonses.com', 'delivered', ['Send', 'Delivery']],
      ['bounce@simulator.amazonses.com', 'bounced', ['Send', 'Bounce']],
      ['complaint@simulator.amazonses.com', 'complained', ['Send', 'Delivery', 'Complaint']],
      ['suppressionlist@simulator.amazonses.com', 'bounced', ['Send', 'Bounce']],
      [p.address('anyone'), 'delivered', ['Send', 'Delivery']],
    ] as const;
    const keys = cases.map(([, status], i) => `${p.name}-${status}-${i}`);
    await Promise.all(cases.map(([to], i) => p.publish(email(to), { key: keys[i] })));

    const items = new Map<string, StoredLedgerItem>();
    await until(
      'every key with all of its events in the ledger',
      async () => {
        for (const key of keys) {
          const item = await readLedgerItem(p.pipeline.dynamodb, resources.ledger.tableName, key);
          if (item) items.set(key, item);
        }
        // Events arrive in any order and the final status can come first (a Complaint before its
        // Delivery): wait until every event of the lifecycle is recorded, not just the status.
        return cases.every(([, , types], i) => {
          const recorded = new Set(items.get(keys[i] as string)?.events?.map((e) => e.type));
          return types.every((type) => recorded.has(type));
        });
      },
      30_000,
    );
    const sent = new Map(p.decisions('sent').map((d) => [d.dedupeKey, d.sesMessageId]));
    cases.forEach(([, status, types], i) => {
      const item = items.get(keys[i] as string);
      // The ledger knows the MessageId SES gave the send function, and the whole timeline in event order.
      expect(item?.sesMessageId).toBe(sent.get(keys[i]));
      expect(item?.events?.map((e) => e.type)).toEqual(types);
      expect(item?.status).toBe(status);
    });
    expect(items.get(keys[3] as string)?.events?.map((e) => e.detail)).toContain('Permanent/OnAccountSuppressionList');

    // Every status change reached the delivery-status topic, with attributes for filter policies.
    const reports: { report: DeliveryReport; attributes: Record<string, string> }[] = [];
    await until(
      'the status changes on the delivery-status topic',
      async () => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: watchUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        for (const m of Messages) {
          const envelope = JSON.parse(m.Body ?? '{}') as {
            Message: string;
            MessageAttributes?: Record<string, { Value: string }>;
          };
          const attributes = Object.fromEntries(
            Object.entries(envelope.MessageAttributes ?? {}).map(([k, v]) => [k, v.Value]),
          );
          reports.push({ report: JSON.parse(envelope.Message) as DeliveryReport, attributes });
        }
        return cases.every(([, status], i) =>
          reports.some((r) => r.report.key === keys[i] && r.report.status === status),
        );
      },
      30_000,
    );
    for (const { report, attributes } of reports) {
      expect(attributes).toEqual({ status: report.status, 'idempotency-key': report.key });
    }
    // Only changes are published (which ones depends on the order the events arrived in), the final one last seen.
    const statusesOf = (key: string) => reports.filter((r) => r.report.key === key).map((r) => r.report.status);
    cases.forEach(([, status], i) => {
      const statuses = statusesOf(keys[i] as string);
      expect(new Set(statuses).size).toBe(statuses.length);
      expect(statuses).toContain(status);
    });
  }, 60_000);
});
