/**
 * Scenario 5, a poison mix: 200 good emails with 40 bad messages shuffled in among them,
 * five of each kind: not JSON, a schema violation, an invalid address, header injection, a
 * raw body put straight on the queue, an unknown SES template, an address SES rejects, and a key
 * reused by a publisher for a different email. Each bad one goes to the DLQ at once, with its
 * reason, while its batch neighbours are sent; nothing is retried into the DLQ.
 */
import { pass, status } from '../../tools/dev/local/fault-proxy';
import { email } from '../integration/support';
import { ChaosRun, expectReliable, inParallel, stopRuns, type Unit } from './harness';

afterEach(stopRuns);

const GOOD = 200;
const EACH = 5;

const messageRejected = () =>
  status(
    400,
    { 'content-type': 'application/json', 'x-amzn-errortype': 'MessageRejected' },
    { message: 'Email address is not verified.' },
  );

test('bad messages among good ones go to the DLQ at once with their reasons; every good one is sent once', async () => {
  const run = await ChaosRun.start({
    order: 5,
    scenario: 'poison mix',
    ses: (send) => (send.recipient.startsWith('rejected-') ? messageRejected() : pass()),
  });
  const poison: ((i: number) => Promise<unknown>)[] = [
    () => run.publishMessage((u) => `not json ${u.id}`),
    () => run.publishMessage((u) => ({ to: u.recipient, subject: '', text: u.id })),
    () => run.publishMessage((u) => ({ to: `not-an-address-${u.id}`, subject: 'S', text: 'T' })),
    () => run.publishMessage((u) => ({ to: u.recipient, subject: 'Hi\r\nBcc: all@example.com', text: u.id })),
    () => run.sendRaw((u) => JSON.stringify(email(u.recipient))),
    () => run.publishMessage((u) => ({ to: u.recipient, template: { name: 'no-such-template', data: { id: u.id } } })),
    () => run.publishMessage((u) => email(u.recipient), { label: 'rejected-' }),
    // The same key for two different emails: one is sent, the other refused.
    async (i) => {
      const either = (u: Unit) => email(u.recipient, `Reused ${u.id}`);
      await run.publishMessage(either, { key: `reused-${i}`, expect: 'either' });
      await run.publishMessage(either, { key: `reused-${i}`, expect: 'either' });
    },
  ];
  const sends = [
    ...Array.from({ length: GOOD }, () => () => run.publishEmail()),
    ...poison.flatMap((kind) => Array.from({ length: EACH }, (_, i) => () => kind(i))),
  ];
  const order = sends.map((send) => ({ send, at: run.random() })).sort((a, b) => a.at - b.at);
  await inParallel(order, 16, ({ send }) => send());
  run.faults.push(
    `${EACH} each of 8 kinds of bad message shuffled among ${GOOD} good ones; SES rejects the "rejected-" addresses`,
  );
  await run.startPods();

  const result = await run.finish();

  expectReliable(result);
  expect(result.emailsSent).toBe(GOOD + EACH);
  expect(result.duplicates).toBe(0);
  expect(result.deadLettered).toEqual({
    InvalidJson: EACH,
    InvalidMessage: 3 * EACH,
    NotAnEnvelope: EACH,
    NotFoundException: EACH,
    MessageRejected: EACH,
    KeyReusedWithDifferentContent: EACH,
  });
  // At once: only a reused key may first meet its twin "in progress" and come back once.
  expect(
    Object.keys(result.deadLetteredAfterRetries).filter((code) => code !== 'KeyReusedWithDifferentContent'),
  ).toEqual([]);
}, 180_000);
