/**
 * A fair share of the rate between teams, end to end on the emulators, as `npm start` runs them: each
 * team's topic feeds the team's own queue, polled by the team's own consumers (its part of the
 * consumers by `rateSharePercent`), and each team's sends lease their slots from the team's own lane
 * of the rate lease. So a burst of one team waits in its own queue, and another team's mail,
 * published in the middle of it, is mailed beside it at the rate's pace, not after it. Measured by
 * the order of the consumers' `sent` decisions: between the second team's publish and its last
 * send, the first team mails about as many as it does (their shares are equal), not its whole
 * burst, as it did when every team's topic fed the one work queue.
 */
import { publishMany, startTestPipeline, until, type TestPipeline } from './support';

const TEAMS = {
  billing: { senders: ['billing@example.com'], rateSharePercent: 50 },
  security: { senders: ['security@example.com'], rateSharePercent: 50 },
};
/** Recipients per second: slow enough that a burst of BURST takes about 10 s. */
const RATE = 10;
const BURST = 100;
const LATE = 10;

let p: TestPipeline;
beforeAll(async () => {
  p = await startTestPipeline({
    // A send may wait for its slots as on AWS (the tests' 2 s timeout leaves it 250 ms: a lane's
    // owner coming back finds it borrowed up to BORROW_PERIOD_MS ahead).
    settings: { teams: TEAMS, maxSendRate: RATE, functionTimeoutSeconds: 10 },
    // As npm start runs them with its two consumers: one on the work queue, one per team (50 % of 2).
    consumers: [{}, { team: 'billing', name: 'billing-1' }, { team: 'security', name: 'security-1' }],
  });
}, 60_000);
afterAll(() => p?.stop());

const sentOf = (team: string) => p.decisions('sent').filter((d) => String(d.dedupeKey).startsWith(`${team}#`));

test("a team's mail published during another team's burst is mailed beside it, at its share, not after it", async () => {
  const teams = p.pipeline.resources.teams!;
  // Each team's topic feeds its own queue.
  expect(teams.billing?.queueUrl).toBeDefined();
  expect(teams.security?.queueUrl).toBeDefined();
  expect(teams.billing?.queueUrl).not.toBe(teams.security?.queueUrl);

  const burst = `burst-${p.name}`;
  await publishMany(p, teams.billing!.topicArn, burst, BURST);
  // The burst is under way (and most of it still queued) when security publishes.
  await until('billing sending', () => sentOf('billing').length >= 5, 30_000);
  const before = p.decisions('sent').length;
  const billingBefore = sentOf('billing').length;
  const late = `late-${p.name}`;
  await publishMany(p, teams.security!.topicArn, late, LATE);
  await until('every security email sent', () => sentOf('security').length === LATE, 60_000);

  // What billing mailed between security's publish and security's last send.
  const sent = p.decisions('sent');
  const lastSecurity = sent.map((d) => String(d.dedupeKey).startsWith('security#')).lastIndexOf(true);
  const billingMeanwhile = sent
    .slice(before, lastSecurity + 1)
    .filter((d) => String(d.dedupeKey).startsWith('billing#'));
  // Equal shares: about as many as security's ten (a lane each at the same rate; allowing for a
  // batch already leased ahead and the idle reserve); far fewer than what was left of the burst.
  const measured = { billingMeanwhile: billingMeanwhile.length, billingLeftAtPublish: BURST - billingBefore };
  expect(measured.billingMeanwhile <= 3 * LATE + 5 ? 'beside the burst' : measured).toBe('beside the burst');
  expect(measured.billingLeftAtPublish).toBeGreaterThan(2 * (3 * LATE + 5));
  // Every security email by a consumer of security's own queue.
  expect(new Set(sentOf('security').map((d) => d.consumer))).toEqual(new Set(['security-1']));

  // Nothing lost, nothing twice: the burst finishes, once each.
  await until('the burst sent', () => sentOf('billing').length >= BURST, 120_000);
  await until('drained', () => p.pipeline.isDrained(), 30_000);
  expect(new Set(sentOf('billing').map((d) => d.dedupeKey)).size).toBe(BURST);
  expect(sentOf('billing')).toHaveLength(BURST);
  expect(p.decisions('dead-lettered')).toEqual([]);
}, 240_000);
