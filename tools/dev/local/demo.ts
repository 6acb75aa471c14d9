/**
 * `npm run demo`: replays the duplicate-email incident on the local stack.
 *
 * Two consumers ("pods") poll one queue. Unique emails are published; some are
 * delivered twice at once the way SNS can (the same envelope enqueued again),
 * some publishes are retried with the same idempotency key, and one poison
 * message is mixed in. The demo ends with a table and exits non-zero unless
 * emails sent == unique messages and the poison message is in the DLQ.
 *
 * It starts its own emulators on free ports, so it runs beside `npm start`.
 */
import { PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { acceptNoArguments } from './arguments';
import { ANY_FREE_PORTS, checkJava, ensureDynamoDbLocal, readMailbox, startEmulators } from './emulators';
import { LocalPipeline } from './pipeline';
import { waitFor } from './processes';
import { loadLocalSettings } from './settings';
import { drainQueue } from './queues';

const UNIQUE = Number(process.env.DEMO_MESSAGES ?? 20);
const SNS_DUPLICATES = Math.ceil(UNIQUE / 3); // envelopes delivered twice
const PUBLISHER_RETRIES = Math.ceil(UNIQUE / 4); // publishes repeated with the same key

function table(rows: [string, string | number][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.max(...rows.map(([, value]) => String(value).length));
  const line = `+-${'-'.repeat(width)}-+-${'-'.repeat(valueWidth)}-+`;
  return [line, ...rows.map(([l, v]) => `| ${l.padEnd(width)} | ${String(v).padStart(valueWidth)} |`), line].join('\n');
}

async function demo(): Promise<number> {
  await checkJava();
  await ensureDynamoDbLocal();
  console.log('Starting emulators and two consumers (pod-1, pod-2)...');
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS });
  const settings = loadLocalSettings({ functionTimeoutSeconds: 5, maxBatchingWindowSeconds: 0 });
  const name = `demo-${Date.now().toString(36)}`;
  const pipeline = await LocalPipeline.create({ name, settings, endpoints: emulators.endpoints });
  try {
    const fast = { RETRY_BASE_SECONDS: '1' };
    await Promise.all([
      pipeline.startConsumer({ name: 'pod-1', env: fast }),
      pipeline.startConsumer({ name: 'pod-2', env: fast }),
    ]);
    const { sns, sqs, resources } = pipeline;

    // A tap on the topic shows us the envelopes SNS delivered, so we can deliver them again.
    const tap = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-tap` }));
    const tapUrl = tap.QueueUrl ?? '';
    const tapArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: tapUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.QueueArn;
    await sns.send(new SubscribeCommand({ TopicArn: resources.topicArn, Protocol: 'sqs', Endpoint: tapArn ?? '' }));

    let published = 0;
    let deliveries = 0;
    const publish = async (message: object, key?: string) => {
      await sns.send(
        new PublishCommand({
          TopicArn: resources.topicArn,
          Message: JSON.stringify(message),
          ...(key ? { MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } } } : {}),
        }),
      );
      published += 1;
      deliveries += 1;
    };

    const progress = setInterval(() => {
      const count = (kind: string) => pipeline.decisions.filter((d) => d.decision === kind).length;
      process.stdout.write(
        `\r  published ${published}  deliveries ${deliveries}  sent ${count('sent')}  duplicates ${count('duplicate')}  retries ${count('retry')}  dead-lettered ${count('dead-lettered')}   `,
      );
    }, 250);

    // 1. Unique emails; every other one carries a publisher key.
    const messages = Array.from({ length: UNIQUE }, (_, i) => ({
      message: { to: `customer${i + 1}@example.com`, subject: `Booking ${i + 1} confirmed`, text: 'See you soon.' },
      key: i % 2 === 0 ? `booking-${i + 1}` : undefined,
    }));
    await Promise.all(messages.map(({ message, key }) => publish(message, key)));

    // 2. SNS delivers some envelopes twice: enqueue the very same envelope again, concurrently.
    const envelopes = await drainQueue(sqs, tapUrl, UNIQUE);
    await Promise.all(
      envelopes.slice(0, SNS_DUPLICATES).map(async (envelope) => {
        await sqs.send(new SendMessageCommand({ QueueUrl: resources.queueUrl, MessageBody: envelope.Body ?? '' }));
        deliveries += 1;
      }),
    );

    // 3. Publishers retry after a timeout: same key, new SNS MessageId.
    const keyed = messages.filter((m) => m.key !== undefined).slice(0, PUBLISHER_RETRIES);
    await Promise.all(keyed.map(({ message, key }) => publish(message, key)));

    // 4. A poison message: a header-injection attempt in the subject.
    await publish({ to: 'victim@example.com', subject: 'Hi\r\nBcc: everyone@example.com', text: 'x' });

    await waitFor(
      async () => {
        const settled = pipeline.decisions.filter((d) => d.decision !== 'retry').length;
        return settled >= deliveries && (await pipeline.isDrained());
      },
      { what: 'every delivery to be settled', timeoutMs: 60_000, intervalMs: 200 },
    );
    clearInterval(progress);
    process.stdout.write('\n\n');

    const sent = (await readMailbox(emulators.endpoints.ses)).emails.length;
    const dlq = await pipeline.queueDepth('dlq');
    const deadLettered = dlq.visible + dlq.inFlight;
    const count = (kind: string) => pipeline.decisions.filter((d) => d.decision === kind).length;
    console.log(
      table([
        ['unique messages', UNIQUE],
        ['published (incl. retries, poison)', published],
        ['deliveries (incl. SNS duplicates)', deliveries],
        ['emails sent', sent],
        ['duplicates suppressed', count('duplicate')],
        ['retries (in-progress conflicts)', count('retry')],
        ['dead-lettered', deadLettered],
      ]),
    );
    const poison = pipeline.decisions.find((d) => d.decision === 'dead-lettered');
    if (poison) console.log(`\nDead-lettered: ${poison.errorCode}: ${poison.reason}`);
    const ok = sent === UNIQUE && deadLettered === 1;
    console.log(
      ok
        ? `\nOK: ${UNIQUE} unique messages, ${deliveries} deliveries, ${sent} emails. Every duplicate was suppressed.`
        : `\nFAILED: expected ${UNIQUE} emails and 1 dead-lettered message, got ${sent} and ${deadLettered}.`,
    );
    return ok ? 0 : 1;
  } finally {
    await pipeline.stop();
    await emulators.stop();
  }
}

const USAGE = `Usage: npm run demo    (no arguments; DEMO_MESSAGES sets the number of unique emails, 20)

Replays the duplicate-email incident on emulators of its own (free ports, beside npm start) and
exits 0 only when every unique email was sent once and the poison message was dead-lettered.`;

/** Runs the demo and exits with its verdict: 0 when every email went out once and the poison was dead-lettered. */
export function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  acceptNoArguments('npm run demo', USAGE, argv);
  return demo().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
