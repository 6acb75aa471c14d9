/**
 * Scenario 2, crash injection: three pods are SIGKILLed while they work and restarted in
 * their slot. Three kills come at random points of progress (idle, mid-batch, before or after
 * a send, between the delete and the next receive); three more come exactly between SES
 * accepting an email and the completion write: the pod's SES proxy forwards SendEmail, and
 * once SES has answered it kills the pod before the answer reaches it.
 *
 * After such a crash the in-progress record expires with the invocation: the redelivery's claim
 * overwrites an INPROGRESS one, so it reads the send ledger first, finds the Send event SES
 * published for the accepted email, and completes without sending. Zero duplicates; the harness
 * still sees every injected crash.
 */
import { pass } from '../../tools/dev/local/fault-proxy';
import { metricTotals } from '../integration/support';
import { ChaosRun, expectReliable, stopRuns, type SesSend } from './harness';

afterEach(stopRuns);

const MESSAGES = 150;

test('pods killed at random points and right after SES accepted lose nothing and send nothing twice', async () => {
  // SendEmail positions at which to crash; a crash due while its pod is already down waits for the next send.
  const crashAt: number[] = [];
  const run = await ChaosRun.start({
    order: 2,
    scenario: 'crash injection',
    // Room for a batch on a busy machine (a timeout would be an ambiguous event of its own),
    // yet a killed pod's records come back after 30 s (6 x the timeout), not a minute.
    settings: { functionTimeoutSeconds: 5 },
    ses: (send: SesSend, r: ChaosRun) => {
      const due = crashAt[0] !== undefined && send.index >= crashAt[0] && !send.pod.killed && !send.pod.crashPending;
      if (!due) return pass();
      crashAt.shift();
      return r.crashAfterAccept(send);
    },
  });
  crashAt.push(...run.pick(3, 10, MESSAGES - 40));
  const killAt = run.pick(3, 15, MESSAGES - 30);
  run.faults.push(
    `crash after SES accepted at SendEmail #${crashAt.join(', #')}; random SIGKILL at ${killAt.join(', ')} decisions; each killed pod restarted`,
  );

  await run.publishEmails(MESSAGES, (i) => (i % 2 === 0 ? { key: `invoice-${i}` } : {}));
  await run.startPods();
  run.killAtProgress(killAt);

  const result = await run.finish();

  expectReliable(result);
  expect(result.crashesAfterAccept).toBe(3);
  expect(result.kills).toBe(6);
  // The send ledger closed the window: each crashed send's redelivery was confirmed from its
  // SES event (the pod that confirmed logs SES's MessageId, so none is left unrecorded), not resent.
  expect(result.duplicates).toBe(0);
  expect(result.ambiguousEvents['crash-after-accept']).toBeUndefined();
  expect(run.decisions('sent').filter((d) => d.confirmedBySesEvent).length).toBeGreaterThanOrEqual(3);
  expect(metricTotals(run.p).UnconfirmedResends ?? 0).toBeGreaterThanOrEqual(result.duplicates);
}, 180_000);
