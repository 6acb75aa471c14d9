/**
 * The send ledger believes only evidence bound to the pipeline's own sends (lambdas/kernel/ledger/binding.ts),
 * end to end: the real send-email and ledger bundles, the local SES publishing SES's events with
 * their origin fields (account, configuration set, caller identity, tags) to the events topic.
 * A forger here is an insider who may publish to the events topic and read real events from it.
 */
import { PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { readLedgerItem } from '../../lambdas/runtime/ledger-store';
import { lookupDelivery } from '../../lambdas/status/lookup';
import { sesEventsFor } from '../../tools/dev/local/ses-front';
import { email, startTestPipeline, until, type TestPipeline } from './support';

type SesEvent = { eventType: string; mail: Record<string, unknown> & { tags: Record<string, string[]> } } & Record<
  string,
  unknown
>;

let p: TestPipeline;
let watchUrl: string;
/** Real events seen on the events topic, by dedupe key. */
const seen = new Map<string, SesEvent[]>();

beforeAll(async () => {
  p = await startTestPipeline({ ledger: true });
  const { sqs, sns, resources } = p.pipeline;
  const watcher = await sqs.send(new CreateQueueCommand({ QueueName: `${p.name}-events-watch` }));
  watchUrl = watcher.QueueUrl ?? '';
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: watchUrl, AttributeNames: ['QueueArn'] }),
  );
  await sns.send(
    new SubscribeCommand({
      TopicArn: resources.ledger.eventsTopicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn ?? '',
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
}, 60_000);
afterAll(async () => p?.stop());

const status = (key: string) =>
  lookupDelivery(
    {
      db: DynamoDBDocumentClient.from(p.pipeline.dynamodb),
      ledgerTableName: p.pipeline.resources.ledger.tableName,
      idempotencyTableName: p.pipeline.resources.tableName,
      keyPrefix: p.pipeline.options.settings.idempotencyKeyPrefix,
    },
    key,
  );

/** A real event of `key` as the events topic carried it. */
async function realEvent(key: string, type: string): Promise<SesEvent> {
  await until(`a real ${type} event of ${key} on the events topic`, async () => {
    const { Messages = [] } = await p.pipeline.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: watchUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const m of Messages) {
      const event = JSON.parse(m.Body ?? '{}') as SesEvent;
      const of = event.mail?.tags?.['dedupe-key']?.[0] ?? '';
      seen.set(of, [...(seen.get(of) ?? []), event]);
    }
    return (seen.get(key) ?? []).some((e) => e.eventType === type);
  });
  return structuredClone((seen.get(key) ?? []).find((e) => e.eventType === type) as SesEvent);
}

/** Publishes a made-up event to the events topic and waits until the ledger has refused it. */
async function plant(event: SesEvent, expectedReason: RegExp): Promise<void> {
  const key = event.mail.tags['dedupe-key']?.[0];
  const before = refusals(key).length;
  await p.pipeline.sns.send(
    new PublishCommand({ TopicArn: p.pipeline.resources.ledger.eventsTopicArn, Message: JSON.stringify(event) }),
  );
  await until(`the ledger to refuse the planted event for ${key}`, () => refusals(key).length > before);
  expect(refusals(key).at(-1)?.reason).toMatch(expectedReason);
}

function refusals(key: string | undefined): { reason?: string }[] {
  return p.pipeline.lines
    .filter(
      (l) =>
        l.consumer === 'ledger' && l.json?.message === 'SES event not recorded: not bound to a send of the pipeline',
    )
    .map((l) => l.json as { dedupeKey?: string; reason?: string })
    .filter((j) => j.dedupeKey === key);
}

async function sendAndWaitDelivered(key: string): Promise<void> {
  await p.publish(email(p.address(key)), { key });
  await until(`${key} delivered`, async () => (await status(key)).status === 'delivered', 30_000);
}

test('a Delivery from another account for a key never published leaves it unknown', async () => {
  const key = `${p.name}-never-published`;
  const { ledger } = p.pipeline.resources;
  const [, delivery] = sesEventsFor(
    {
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: ['ada@example.com'] },
      EmailTags: [{ Name: 'dedupe-key', Value: key }],
    },
    'forged-message-id',
    ledger.configurationSetName,
    Date.now(),
    p.pipeline.resources.senderRoleName,
  ) as [SesEvent, SesEvent];
  delivery.mail.sendingAccountId = '999999999999';
  await plant(delivery, /another account/);
  expect(await status(key)).toEqual({ key, status: 'unknown', events: [] });
  expect(await readLedgerItem(p.pipeline.dynamodb, ledger.tableName, key)).toBeUndefined();
}, 60_000);

test('a real Send event copied under another key leaves that key unknown', async () => {
  const real = `${p.name}-real`;
  const victim = `${p.name}-victim`;
  await sendAndWaitDelivered(real);
  const send = await realEvent(real, 'Send');
  send.mail.tags['dedupe-key'] = [victim];
  await plant(send, /claim of another key/);
  expect((await status(victim)).status).toBe('unknown');
}, 60_000);

test('forged Complaint and Bounce events of another SES message id leave a delivered key delivered', async () => {
  const key = `${p.name}-delivered`;
  await sendAndWaitDelivered(key);
  const send = await realEvent(key, 'Send');
  const at = new Date().toISOString();
  const forged = { ...send.mail, messageId: 'forged-message-id' };
  await plant(
    { eventType: 'Complaint', mail: forged, complaint: { complaintFeedbackType: 'abuse', timestamp: at } } as SesEvent,
    /this attempt is SES message/,
  );
  await plant(
    {
      eventType: 'Bounce',
      mail: forged,
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', timestamp: at },
    } as SesEvent,
    /this attempt is SES message/,
  );
  const report = await status(key);
  expect(report.status).toBe('delivered');
  expect(report.events.map((e) => e.type)).toEqual(['Send', 'Delivery']);
  expect(JSON.stringify(report)).not.toContain('attemptId');
}, 60_000);

test('an attempt id guessed for a real claim is not bound', async () => {
  const key = `${p.name}-guessed`;
  await sendAndWaitDelivered(key);
  const send = await realEvent(key, 'Send');
  send.mail.tags['dedupe-attempt'] = ['0'.repeat(32)];
  await plant(
    { ...send, eventType: 'Complaint', complaint: { timestamp: new Date().toISOString() } },
    /never sent with/,
  );
  expect((await status(key)).status).toBe('delivered');
}, 60_000);
