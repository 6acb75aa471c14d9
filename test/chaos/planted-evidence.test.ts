/**
 * Scenario 9, planted evidence. Before the emails are published, a `Send` event is planted in
 * the ledger's buffer for each of their keys (in EventBridge's envelope, with SES's source), from the pipeline's own account, configuration
 * set and caller identity (everything an insider can copy from a real event), but with an
 * attempt id of its own. Then every first SendEmail fails ambiguously (SES answers 500 without
 * having taken the email), so every retry reads the ledger before it sends again. The ledger
 * refused the planted events, the retries find no event of their own attempts, wait out the
 * grace and send: each email exactly once, none stopped by the planted evidence.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { randomBytes } from 'node:crypto';
import { eventBridgeEnvelope } from '../../tools/dev/local/event-bus';
import { pass, sesInternalFailure } from '../../tools/dev/local/fault-proxy';
import { sesEventsFor } from '../../tools/dev/local/ses-front';
import { metricTotals, until } from '../integration/support';
import { ChaosRun, expectReliable, stopRuns, type SesSend } from './harness';

afterEach(stopRuns);

const MESSAGES = 10;

test('a Send planted before an ambiguous failure does not stop the real send', async () => {
  const failed = new Set<string>();
  const run = await ChaosRun.start({
    order: 9,
    scenario: 'Planted Send events',
    ses: (send: SesSend) => {
      if (failed.has(send.recipient)) return pass();
      failed.add(send.recipient);
      return sesInternalFailure();
    },
  });
  const { pipeline } = run.p;
  const { ledger, senderRoleName } = pipeline.resources;
  const keys = Array.from({ length: MESSAGES }, (_, i) => `planted-${i}`);
  for (const key of keys) {
    const [send] = sesEventsFor(
      {
        FromEmailAddress: 'noreply@example.com',
        Destination: { ToAddresses: ['someone@example.com'] },
        EmailTags: [
          { Name: 'dedupe-key', Value: key },
          { Name: 'dedupe-attempt', Value: randomBytes(16).toString('hex') },
        ],
      },
      `planted-${randomBytes(8).toString('hex')}`,
      ledger.configurationSetName,
      Date.now(),
      senderRoleName,
    );
    // Straight into the buffer, in EventBridge's envelope with SES's source: more than any forger on AWS
    // can do (the buffer admits only SES's events rule there).
    await pipeline.sqs.send(
      new SendMessageCommand({
        QueueUrl: ledger.bufferQueueUrl,
        MessageBody: JSON.stringify(eventBridgeEnvelope(send ?? {})),
      }),
    );
  }
  const refused = () =>
    pipeline.lines.filter(
      (l) =>
        l.consumer === 'ledger' && l.json?.message === 'SES event not recorded: not bound to a send of the pipeline',
    ).length;
  await until('the ledger to refuse every planted Send', () => refused() >= MESSAGES, 30_000);
  run.faults.push(
    `a Send event planted for each of the ${MESSAGES} keys (pipeline's origin fields, made-up attempt id); every first SendEmail answered 500 unsent`,
  );

  await run.publishEmails(MESSAGES, (i) => ({ key: keys[i] as string }));
  await run.startPods();
  const result = await run.finish();

  expectReliable(result);
  expect(result.emailsSent).toBe(MESSAGES);
  expect(result.duplicates).toBe(0);
  const totals = metricTotals(run.p);
  expect(totals.ConfirmedBySesEvent).toBeUndefined();
  expect(totals.UnconfirmedResends).toBe(MESSAGES);
}, 180_000);
