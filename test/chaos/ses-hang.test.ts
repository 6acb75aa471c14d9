/**
 * Scenario 7, unknown-fate sends and the send ledger.
 *
 * SES hung: aws-ses-v2-local's process is frozen (SIGSTOP) while 20 messages are sent, so every
 * SendEmail times out in the pod, and SES accepts them all late when it resumes, as SES does
 * with a request whose answer was lost. Scaled from the 60 s hang of the issue to 10 s, under
 * a grace of 30 s, three times the hang (production: 300 s against a 60 s hang): every retry reads
 * the ledger, waits, and finds the Send event once SES resumes. Exactly 20 emails, and no resend.
 * The grace is counted from each first attempt, and on a busy machine the last message reaches
 * the frozen SES seconds after the first, so the grace must cover that spread, the hang and the
 * ledger's lag; the test checks that precondition instead of hoping for it.
 *
 * Events withheld: every first SendEmail is reset after SES accepted it; the SES events of five
 * keys are withheld past the grace. Those five are sent again, each counted as an unconfirmed
 * resend; every other key is confirmed from its Send event. Duplicates: exactly those five.
 */
import { forwardThenReset, pass } from '../../tools/dev/local/fault-proxy';
import { waitFor } from '../../tools/dev/local/processes';
import { metricTotals, sleep } from '../integration/support';
import { ChaosRun, CHAOS_GRACE_SECONDS, expectReliable, stopRuns, type SesSend } from './harness';

afterEach(stopRuns);

const MESSAGES = 20;
const HANG_MS = 10_000;
/** The hung scenario's grace: three hangs (see the top of this file). */
const HUNG_GRACE_SECONDS = (3 * HANG_MS) / 1000;

test('SES hung while 20 messages are sent: each is sent exactly once', async () => {
  const pid = Number(process.env.EMULATOR_SES_PID);
  expect(pid).toBeGreaterThan(0);
  const run = await ChaosRun.start({
    order: 7,
    scenario: 'SES hung',
    env: { SES_TIMEOUT_MS: '1000' },
    sendConfirmationGraceSeconds: HUNG_GRACE_SECONDS,
  });
  await run.publishEmails(MESSAGES, (i) => ({ key: `hung-${i}` }));
  process.kill(pid, 'SIGSTOP');
  // No send can have been attempted before the pods start: the earliest grace starts here.
  const podsStartedAt = Date.now();
  let frozenMs = 0;
  try {
    await run.startPods();
    await waitFor(async () => run.pods.reduce((n, pod) => n + pod.forwarded.length, 0) >= MESSAGES, {
      what: 'every message to reach the hung SES',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    // The fault's length: SES stays frozen this long whatever the pods do.
    await sleep(HANG_MS);
  } finally {
    process.kill(pid, 'SIGCONT');
    frozenMs = Date.now() - podsStartedAt;
  }
  run.faults.push(
    `aws-ses-v2-local frozen (SIGSTOP) for ${HANG_MS / 1000} s after the last send reached it (${(frozenMs / 1000).toFixed(1)} s ` +
      `after the pods started); SES request timeout 1 s; grace ${HUNG_GRACE_SECONDS} s`,
  );
  const result = await run.finish();

  expectReliable(result);
  // The precondition: SES came back with a third of the grace left for the earliest attempt's
  // Send event to reach the ledger.
  expect(frozenMs).toBeLessThan((HUNG_GRACE_SECONDS * 1000 * 2) / 3);
  expect(result.emailsSent).toBe(MESSAGES);
  expect(result.duplicates).toBe(0);
  const totals = metricTotals(run.p);
  expect(totals.AmbiguousSends).toBeGreaterThanOrEqual(1);
  expect(totals.UnconfirmedResends).toBeUndefined();
  expect(run.decisions('retry').some((d) => d.errorCode === 'AwaitingSendConfirmation')).toBe(true);
}, 120_000);

test('SES events withheld past the grace: only those keys are sent twice, each counted', async () => {
  const held = (tag: string) => /^held-/.test(tag);
  const reset = new Set<string>();
  const run = await ChaosRun.start({
    order: 8,
    scenario: 'SES events withheld',
    withholdEvents: held,
    ses: (send: SesSend) => {
      if (reset.has(send.recipient)) return pass();
      reset.add(send.recipient);
      return forwardThenReset();
    },
  });
  run.faults.push(
    `every first SendEmail reset after SES accepted it; the events of 5 keys withheld past the ${CHAOS_GRACE_SECONDS} s grace`,
  );
  await run.publishEmails(MESSAGES, (i) => ({ key: i < 5 ? `held-${i}` : `seen-${i}` }));
  await run.startPods();
  await run.settle();
  await run.releaseEvents();
  const result = await run.finish();

  expectReliable(result);
  expect(result.duplicates).toBe(5);
  expect(result.duplicateLog.map((d) => d.key).sort()).toEqual(['held-0', 'held-1', 'held-2', 'held-3', 'held-4']);
  const totals = metricTotals(run.p);
  expect(totals.UnconfirmedResends).toBe(5);
  expect(totals.ConfirmedBySesEvent).toBe(MESSAGES - 5);
}, 120_000);
