/**
 * The send ledger believes only evidence bound to the pipeline's own sends (lambdas/kernel/ledger/binding.ts),
 * end to end: the real send-email and ledger bundles, the local SES putting SES's events with their
 * origin fields (account, configuration set, caller identity, tags) on the local default bus, in
 * EventBridge's envelope, and the rule delivering them to the ledger's buffer.
 *
 * A forger here is stronger than any on AWS: one who can put any message in the buffer queue (on
 * AWS the buffer's policy admits only SES's events rule, test/infra/queue-policies.test.ts, and no
 * PutEvents caller may use the source aws.ses) and who reads real events off the bus (a rule of its
 * own with the ledger's pattern).
 */
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { readLedgerItem } from '../../lambdas/runtime/ledger-store';
import { lookupDelivery } from '../../lambdas/status/lookup';
import { ledgerEventPattern } from '../../lambdas/kernel/ledger/event-pattern';
import { LOCAL_ACCOUNT_ID } from '../../lib/cli/target';
import { eventBridgeEnvelope } from '../../tools/dev/local/event-bus';
import { putLocalRule } from '../../tools/dev/local/resources';
import { sesEventsFor } from '../../tools/dev/local/ses-front';
import { email, startTestPipeline, until, type TestPipeline } from './support';

type SesEvent = { eventType: string; mail: Record<string, unknown> & { tags: Record<string, string[]> } } & Record<
  string,
  unknown
>;

let p: TestPipeline;
let watchUrl: string;
/** Real events seen on the bus, by dedupe key. */
const seen = new Map<string, SesEvent[]>();

beforeAll(async () => {
  p = await startTestPipeline({ ledger: true });
  const { sqs, ses, resources } = p.pipeline;
  const watcher = await sqs.send(new CreateQueueCommand({ QueueName: `${p.name}-events-watch` }));
  watchUrl = watcher.QueueUrl ?? '';
  await putLocalRule(ses, {
    Name: `${p.name}-events-watch`,
    EventPattern: ledgerEventPattern(LOCAL_ACCOUNT_ID, resources.ledger.configurationSetName),
    QueueUrl: watchUrl,
  });
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

/** A real event of `key` (the detail of what the bus carried). */
async function realEvent(key: string, type: string): Promise<SesEvent> {
  await until(`a real ${type} event of ${key} on the bus`, async () => {
    const { Messages = [] } = await p.pipeline.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: watchUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const m of Messages) {
      const event = (JSON.parse(m.Body ?? '{}') as { detail: SesEvent }).detail;
      const of = event.mail?.tags?.['dedupe-key']?.[0] ?? '';
      seen.set(of, [...(seen.get(of) ?? []), event]);
    }
    return (seen.get(key) ?? []).some((e) => e.eventType === type);
  });
  return structuredClone((seen.get(key) ?? []).find((e) => e.eventType === type) as SesEvent);
}

/**
 * Puts a made-up event in the ledger's buffer, in EventBridge's envelope (`envelope` overrides its
 * fields), and waits until the ledger has refused it.
 */
async function plant(event: SesEvent, expectedReason: RegExp, envelope: Record<string, unknown> = {}): Promise<void> {
  const key = event.mail.tags['dedupe-key']?.[0];
  const before = refusals(key).length;
  await p.pipeline.sqs.send(
    new SendMessageCommand({
      QueueUrl: p.pipeline.resources.ledger.bufferQueueUrl,
      MessageBody: JSON.stringify({ ...eventBridgeEnvelope(event), ...envelope }),
    }),
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

test("a real event put on the buffer under another source (a custom PutEvents) is not SES's word", async () => {
  const key = `${p.name}-custom-source`;
  await sendAndWaitDelivered(key);
  const send = await realEvent(key, 'Send');
  await plant(
    { ...send, eventType: 'Bounce', bounce: { bounceType: 'Permanent', timestamp: new Date().toISOString() } },
    /not an SES event/,
    {
      'detail-type': 'Email Bounced',
      source: 'my.app',
    },
  );
  expect((await status(key)).status).toBe('delivered');
}, 60_000);

test("a real event forwarded from another account's bus is refused, though its detail is the pipeline's", async () => {
  const key = `${p.name}-other-bus`;
  await sendAndWaitDelivered(key);
  const send = await realEvent(key, 'Send');
  await plant(
    { ...send, eventType: 'Complaint', complaint: { timestamp: new Date().toISOString() } },
    /another account's event bus/,
    { 'detail-type': 'Email Complaint Received', account: '999999999999' },
  );
  expect((await status(key)).status).toBe('delivered');
}, 60_000);
