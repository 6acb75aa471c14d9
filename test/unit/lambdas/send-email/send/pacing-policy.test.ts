/**
 * The pacer's policy (send/pacing-policy.ts), table-driven on a virtual clock: each row is a
 * situation (the time, the slots a container holds, the sends waiting, what the lanes' items were
 * found to hold) and the decision expected. Times are written relative to T; the pipeline is
 * `npm start`'s: maxSendRate 14, 20 % for the high lane (normal slots 94 ms apart, high 376 ms).
 */
import {
  admission,
  BORROW_PERIOD_MS,
  FALLBACK_MS,
  fallbackAfterStoreFailure,
  FAR_SLOT_MS,
  IMPLAUSIBLE_FALLBACK_MS,
  implausibility,
  LEASE_HORIZON_MS,
  MAX_LEASE,
  maxLeaseAheadMs,
  MIN_WAIT_MS,
  pausedAfterThrottle,
  POLL_MS,
  sleepMs,
  slotLagMs,
  step,
  THROTTLE_PAUSE_MS,
  type Decision,
  type PacerState,
  type WaitingSend,
} from '../../../../../lambdas/send-email/send/pacing-policy';
import { laneRates, type LaneId } from '../../../../../lambdas/send-email/send/lane-rates';
import { afterLease } from '../../../../../lambdas/send-email/send/rate-lease';

const T = 1_000_000;
const RATES = laneRates(14, 20);
const LAG = slotLagMs(14);

interface Send extends WaitingSend {
  readonly name: string;
}

const LANE_OF: Record<string, LaneId> = { h: 'high', b: 'team:billing', s: 'team:security', x: 'high:security' };

/**
 * A send waiting: `n3` is normal, `h1` high, `b1` billing's, `s1` security's and `x1` security's
 * high-priority mail (teams); `recipients`
 * and `deadline` (relative to T) as given.
 */
function send(name: string, recipients = 1, deadline = 24_000): Send {
  return { name, lane: LANE_OF[name[0]!] ?? 'normal', recipients, deadline: T + deadline };
}

/** `count` normal sends of one recipient each. */
function bulk(count: number): Send[] {
  return Array.from({ length: count }, (_, i) => send(`n${i + 1}`));
}

interface Situation {
  readonly now?: number;
  readonly rates?: Partial<Record<LaneId, number>>;
  readonly pool?: number[];
  readonly sends?: Send[];
  readonly pausedUntil?: number;
  readonly fallbackUntil?: number;
  readonly busyUntil?: Partial<Record<LaneId, number>>;
  readonly leasing?: Partial<Record<LaneId, boolean>>;
  readonly borrowing?: boolean;
}

/** The state of a situation; times relative to T. */
function state(s: Situation): PacerState<Send> {
  const sends = s.sends ?? [];
  const at = (relative: number) => T + relative;
  return {
    now: at(s.now ?? 0),
    rates: s.rates ?? RATES,
    lagMs: LAG,
    pool: (s.pool ?? []).map(at),
    waiting: Object.fromEntries(
      [...new Set(sends.map((w) => w.lane))].map((lane) => [lane, sends.filter((w) => w.lane === lane)]),
    ),
    pausedUntil: at(s.pausedUntil ?? -T),
    fallbackUntil: at(s.fallbackUntil ?? -T),
    busyUntil: Object.fromEntries(Object.entries(s.busyUntil ?? {}).map(([lane, until]) => [lane, at(until ?? -T)])),
    leasing: s.leasing ?? {},
    borrowing: s.borrowing ?? false,
  };
}

/** A decision as a row reads it: names, times relative to T, each request as `<kind> <count> of <item> for <lane>`. */
function summary(decision: Decision<Send>) {
  const relative = (t: number) => (Number.isFinite(t) ? Math.round(t - T) : t);
  if (decision.kind === 'static') return { static: true, lookAgainAt: relative(decision.lookAgainAt) };
  return {
    due: decision.due.map((w) => w.name),
    expired: decision.expired.map((w) => w.name),
    requests: decision.requests.map(
      (r) =>
        `${r.kind} ${r.count} of ${r.item} for ${r.lane}` +
        (r.kind === 'lease' ? ` from ${relative(r.latestStart)}` : '') +
        (r.holds === true ? ' (holding)' : ''),
    ),
    lookAgainAt: relative(decision.lookAgainAt),
    pool: decision.pool.map(relative),
  };
}

/** The rows' expectations, with the fields a row does not name as they are when nothing happens. */
function decided(expected: Partial<ReturnType<typeof summary>>) {
  if ('static' in expected) return expected;
  return { due: [], expired: [], requests: [], lookAgainAt: Infinity, pool: [], ...expected };
}

const HIGH_BORROW = Math.floor(BORROW_PERIOD_MS / (1000 / RATES.high)); // 2 of the high lane's slots
const NORMAL_BORROW = Math.floor(BORROW_PERIOD_MS / (1000 / RATES.normal)); // 8 of the normal lane's

describe('step: which sends go now, what to lease, when to look again', () => {
  test.each<[string, Situation, Partial<ReturnType<typeof summary>>]>([
    // Steady rate.
    [
      'steady: a send whose slot is due goes on the earliest',
      { pool: [-10, 90], sends: [send('n1')] },
      { due: ['n1'], pool: [90] },
    ],
    [
      'steady: a send whose slot is ahead waits for it, and the pacer looks again then',
      { pool: [90], sends: [send('n1')] },
      { lookAgainAt: 90, pool: [90] },
    ],
    [
      'a send of 3 recipients goes at its third slot (SES counts recipients on arrival)',
      { pool: [-50, 40, 130], sends: [send('n1', 3)] },
      { lookAgainAt: 130, pool: [-50, 40, 130] },
    ],
    [
      'a slot up to the lag in the past is used, an older one dropped',
      { pool: [-LAG - 1, -LAG], sends: [send('n1')] },
      { due: ['n1'] },
    ],
    ['slots no send waits for are kept for the next sends', { pool: [-10, 50, 150] }, { pool: [-10, 50, 150] }],
    // Burst.
    [
      'a burst without slots borrows the idle high lane first, at most BORROW_PERIOD_MS of it',
      { sends: bulk(10) },
      { requests: [`borrow ${HIGH_BORROW} of high for normal (holding)`] },
    ],
    [
      'a burst while the high lane is leased ahead: its own lane, at most LEASE_HORIZON_MS ahead',
      { sends: bulk(10), busyUntil: { high: 400 } },
      { requests: [`lease 10 of normal for normal from ${LEASE_HORIZON_MS}`] },
    ],
    [
      'a burst leases at most MAX_LEASE slots at once',
      { sends: bulk(150), busyUntil: { high: 400 } },
      { requests: [`lease ${MAX_LEASE} of normal for normal from ${LEASE_HORIZON_MS}`] },
    ],
    [
      'a lane already leased beyond the horizon: no write, the sends wait without slots',
      { sends: bulk(10), busyUntil: { high: 400, normal: LEASE_HORIZON_MS + 1 } },
      {},
    ],
    [
      'one lease per lane at a time: none while the last is on its way',
      { sends: bulk(10), busyUntil: { high: 400 }, leasing: { normal: true } },
      {},
    ],
    [
      "a lease reaches no further than the sends' deadline allows",
      { sends: [send('n1', 1, 500), send('n2', 1, 24_000)], busyUntil: { high: 400 } },
      { requests: [`lease 2 of normal for normal from ${Math.round(500 - 2 * (1000 / RATES.normal))}`] },
    ],
    // The high lane's reserve.
    [
      'high sends go first: they take the earliest slots',
      { pool: [-10, 80], sends: [send('n1'), send('h1')] },
      { due: ['h1'], lookAgainAt: 80, pool: [80] },
    ],
    [
      'a high send without slots borrows the idle normal lane: no wait for its own lease',
      { sends: [send('h1')] },
      { requests: ['borrow 1 of normal for high (holding)'] },
    ],
    [
      "a high send with the normal lane busy leases the high lane's own slots",
      { sends: [send('h1')], busyUntil: { normal: 300 } },
      { requests: [`lease 1 of high for high from ${LEASE_HORIZON_MS}`] },
    ],
    [
      'bulk does not borrow the reserve while high mail has it leased ahead',
      { sends: bulk(5), busyUntil: { high: 1 } },
      { requests: [`lease 5 of normal for normal from ${LEASE_HORIZON_MS}`] },
    ],
    [
      'a high send given slots bulk leased, further off than BORROW_THRESHOLD_MS, leases its own',
      { pool: [200], sends: [send('h1')], busyUntil: { normal: 200 } },
      { requests: [`lease 1 of high for high from ${LEASE_HORIZON_MS}`], lookAgainAt: 200, pool: [200] },
    ],
    [
      "a lane with no reserve (a share of 0) takes its slots from the other lane's item",
      { rates: laneRates(14, 0), sends: [send('h1')], busyUntil: { normal: 300 } },
      { requests: [`lease 1 of normal for high from ${LEASE_HORIZON_MS}`] },
    ],
    // The normal lane is not starved.
    [
      'normal sends get the slots the high ones leave, in the same look',
      { pool: [-30, -20, -10], sends: [send('h1'), send('n1'), send('h2')] },
      { due: ['h1', 'h2', 'n1'] },
    ],
    [
      'normal sends left without slots by high ones lease their own lane: high mail never takes it',
      { pool: [-20, -10], sends: [send('h1'), send('h2'), send('n1')], busyUntil: { high: 400 } },
      { due: ['h1', 'h2'], requests: [`lease 1 of normal for normal from ${LEASE_HORIZON_MS}`] },
    ],
    [
      'high sends borrowing the normal lane take at most BORROW_PERIOD_MS of it',
      { sends: Array.from({ length: 20 }, (_, i) => send(`h${i + 1}`)) },
      { requests: [`borrow ${NORMAL_BORROW} of normal for high (holding)`] },
    ],
    // Throttle backoff.
    [
      'a throttle pauses the container: a due slot waits until the pause ends',
      { pool: [-10], sends: [send('n1')], pausedUntil: THROTTLE_PAUSE_MS },
      { lookAgainAt: THROTTLE_PAUSE_MS, pool: [-10] },
    ],
    [
      'when the pause has ended the send goes on a slot within the lag',
      { now: THROTTLE_PAUSE_MS, pool: [THROTTLE_PAUSE_MS - 10], sends: [send('n1')], pausedUntil: THROTTLE_PAUSE_MS },
      { due: ['n1'] },
    ],
    // Deadlines.
    [
      'a send still waiting past its deadline gives up, and nothing is leased for it',
      { sends: [send('n1', 1, -1)] },
      { expired: ['n1'] },
    ],
    [
      'a send whose slot is due goes even past its deadline',
      { pool: [-10], sends: [send('n1', 1, -1)] },
      { due: ['n1'] },
    ],
    // The store failed, or an item was implausible: the static share.
    [
      'during a fallback every waiting send paces to the static share',
      { pool: [-10], sends: [send('n1'), send('h1')], fallbackUntil: 1 },
      { static: true, lookAgainAt: POLL_MS },
    ],
    [
      'when the fallback ends, the lease again',
      { now: 1, sends: [send('n1')], fallbackUntil: 1, busyUntil: { high: 400 } },
      { requests: [`lease 1 of normal for normal from ${LEASE_HORIZON_MS + 1}`] },
    ],
    // The rule removed in df5b13d and brought back in 060ed74.
    [
      "sends whose own slots are all further off than FAR_SLOT_MS borrow the other lane's idle ones",
      { pool: [100, FAR_SLOT_MS + 1], sends: bulk(2) },
      { requests: [`borrow 2 of high for normal (holding)`], lookAgainAt: 100, pool: [100, FAR_SLOT_MS + 1] },
    ],
    [
      '... not when their last slot is within FAR_SLOT_MS',
      { pool: [100, FAR_SLOT_MS], sends: bulk(2) },
      { lookAgainAt: 100, pool: [100, FAR_SLOT_MS] },
    ],
    [
      '... nor while the container holds slots no send waits for',
      { pool: [100, FAR_SLOT_MS + 1, FAR_SLOT_MS + 100], sends: bulk(2) },
      { lookAgainAt: 100, pool: [100, FAR_SLOT_MS + 1, FAR_SLOT_MS + 100] },
    ],
    [
      '... nor while the other lane is leased ahead',
      { pool: [100, FAR_SLOT_MS + 1], sends: bulk(2), busyUntil: { high: 1 } },
      { lookAgainAt: 100, pool: [100, FAR_SLOT_MS + 1] },
    ],
    [
      '... nor while another borrow is on its way',
      { pool: [100, FAR_SLOT_MS + 1], sends: bulk(2), borrowing: true },
      { lookAgainAt: 100, pool: [100, FAR_SLOT_MS + 1] },
    ],
  ])('%s', (_, situation, expected) => {
    expect(summary(step(state(situation)))).toEqual(decided(expected));
  });

  test('the sends left out of a decision are the ones still waiting: a send is never both due and expired', () => {
    // n2 came before n1, whose deadline has passed with its slot still ahead.
    const sends = [send('h1', 2), send('n2'), send('n1', 1, -5), send('n3', 3)];
    const decision = step(state({ pool: [-40, -30, -20, 10, 20], sends }));
    if (decision.kind !== 'slots') throw new Error('expected slots');
    expect(decision.due.map((w) => w.name)).toEqual(['h1', 'n2']);
    expect(decision.expired.map((w) => w.name)).toEqual(['n1']);
    // n3 waits: its three slots are 10, 20 and one not leased yet.
    expect(decision.pool.map((t) => t - T)).toEqual([10, 20]);
    expect(decision.requests).toHaveLength(1);
    expect(decision.requests[0]).toMatchObject({ kind: 'borrow', lane: 'normal', item: 'high', count: 1, holds: true });
  });
});

/**
 * Issue 34's teams: billing 70 % and security 30 % of the rate, security's high-priority mail 20 % of
 * its share; nothing is left for the pipeline's own lanes.
 */
const TEAM_RATES = laneRates(14, 20, { billing: 70, security: 30 }, ['security']);
const securityInterval = 1000 / TEAM_RATES['team:security']!;
/** billing 60 %, security 30 %: the pipeline's own lanes keep 10 %. */
const SOME_RATES = laneRates(14, 20, { billing: 60, security: 30 }, ['security']);

describe('step with teams: a lane each', () => {
  test.each<[string, Situation, Partial<ReturnType<typeof summary>>]>([
    [
      "a team's burst without slots borrows its sibling first: its own high-priority reserve (a slot of it here), holding it",
      { rates: TEAM_RATES, sends: [send('s1'), send('s2')] },
      { requests: ['borrow 1 of high:security for team:security (holding)'] },
    ],
    [
      "... and a team's high-priority mail its queue's lane",
      { rates: TEAM_RATES, sends: [send('x1')] },
      { requests: ['borrow 1 of team:security for high:security (holding)'] },
    ],
    [
      'a team without a reserve borrows the lane found idle the longest: never looked at before found busy a while ago',
      { rates: TEAM_RATES, sends: [send('b1'), send('b2')], busyUntil: { 'high:security': -10 } },
      { requests: ['borrow 2 of team:security for team:billing'] },
    ],
    [
      '... and, every other lane busy, its own lane',
      { rates: TEAM_RATES, sends: [send('b1'), send('b2')], busyUntil: { 'high:security': 400, 'team:security': 300 } },
      { requests: [`lease 2 of team:billing for team:billing from ${LEASE_HORIZON_MS}`] },
    ],
    [
      "the pipeline's own lanes with some rate left: a burst on the work queue holds the pipeline's reserve first",
      { rates: SOME_RATES, sends: [send('n1')] },
      { requests: ['borrow 1 of high for normal (holding)'] },
    ],
    [
      "a team's lease is on its own lane, at its own interval: a team never leases another team's future slots",
      { rates: TEAM_RATES, sends: [send('s1', 1, 500)], busyUntil: { 'high:security': 400, 'team:billing': 300 } },
      {
        requests: [
          `lease 1 of team:security for team:security from ${Math.round(500 - 1000 / TEAM_RATES['team:security']!)}`,
        ],
      },
    ],
    [
      'a lane too slow for all its sends before their deadline leases what fits, for the first of them',
      {
        rates: TEAM_RATES,
        sends: Array.from({ length: 10 }, (_, i) => send(`s${i + 1}`, 1, 2000)),
        busyUntil: { 'high:security': 400, 'team:billing': 300 },
      },
      {
        requests: [
          `lease ${Math.floor(2000 / securityInterval)} of team:security for team:security from ${Math.round(
            2000 - Math.floor(2000 / securityInterval) * securityInterval,
          )}`,
        ],
      },
    ],
    [
      "the work queue's lane with no share left (the teams' shares sum to 100) borrows only: no lease of another's slots",
      {
        rates: TEAM_RATES,
        sends: [send('n1')],
        busyUntil: { 'high:security': 400, 'team:billing': 300, 'team:security': 300 },
      },
      {},
    ],
    [
      '... and takes an idle lane when there is one',
      { rates: TEAM_RATES, sends: [send('n1')], busyUntil: { 'high:security': 400, 'team:billing': 300 } },
      { requests: ['borrow 1 of team:security for normal'] },
    ],
    [
      "a team's high-priority mail given its queue's slots far off leases its own reserve",
      { rates: TEAM_RATES, pool: [200], sends: [send('x1')], busyUntil: { 'team:security': 200, 'team:billing': 300 } },
      {
        requests: [`lease 1 of high:security for high:security from ${LEASE_HORIZON_MS}`],
        lookAgainAt: 200,
        pool: [200],
      },
    ],
    [
      "a team's sends with their own slots far off borrow an idle lane too",
      {
        rates: TEAM_RATES,
        pool: [100, FAR_SLOT_MS + 1],
        sends: [send('b1'), send('b2')],
        busyUntil: { 'high:security': 400, 'team:billing': FAR_SLOT_MS + 1 },
      },
      { requests: ['borrow 2 of team:security for team:billing'], lookAgainAt: 100, pool: [100, FAR_SLOT_MS + 1] },
    ],
  ])('%s', (_, situation, expected) => {
    expect(summary(step(state(situation)))).toEqual(decided(expected));
  });

  test('the lag allows one recipient of rounding per lane', () => {
    // 6/s: two lanes may lag MAX_SLOT_LAG_MS, four only (6 - 4) / 5.7 s less BUNCHING_MS.
    expect(slotLagMs(6, 2)).toBe(500);
    expect(Math.round(slotLagMs(6, 4))).toBe(251);
    expect(slotLagMs(4, 4)).toBe(0);
  });
});

describe('sending, throttles and fallbacks', () => {
  test.each<[string, number, number]>([
    ['a slot ahead: until then', T + 10, 10],
    ['nothing to wait for: the longest poll', Infinity, POLL_MS],
    ['a slot already due: a millisecond', T - 50, 1],
  ])('the scheduler sleeps until the next look (%s)', (_, lookAgainAt, expected) => {
    expect(sleepMs(lookAgainAt, T)).toBe(expected);
  });

  test.each<[string, number, number, number, { kind: string; recipients: number; deadline: number }]>([
    [
      'a send may always wait MIN_WAIT_MS for its lease',
      0,
      -100,
      0,
      { kind: 'wait', recipients: 1, deadline: T + MIN_WAIT_MS },
    ],
    ['a later deadline stands', 3, 5000, 0, { kind: 'wait', recipients: 3, deadline: T + 5000 }],
    ['during a fallback, the static share', 2, 5000, T + 1, { kind: 'static', recipients: 2, deadline: T + 5000 }],
    ['after it, the lease again', 2, 5000, T, { kind: 'wait', recipients: 2, deadline: T + 5000 }],
  ])('a send asks: %s', (_, recipients, deadline, fallbackUntil, expected) => {
    expect(admission(T, recipients, T + deadline, fallbackUntil)).toEqual(expected);
  });

  test('a throttle pauses a second; a store failure means the static share for 30 s', () => {
    expect(pausedAfterThrottle(T)).toBe(T + THROTTLE_PAUSE_MS);
    expect(THROTTLE_PAUSE_MS).toBe(1000);
    expect(fallbackAfterStoreFailure(T)).toBe(T + FALLBACK_MS);
    expect(FALLBACK_MS).toBe(30_000);
    // Through the fallback, every look sends the waiting sends to the static share; then leases again.
    const fallbackUntil = fallbackAfterStoreFailure(T) - T;
    expect(step(state({ now: fallbackUntil - 1, sends: [send('n1')], fallbackUntil })).kind).toBe('static');
    expect(step(state({ now: fallbackUntil, sends: [send('n1')], fallbackUntil })).kind).toBe('slots');
  });
});

describe('implausible lane items', () => {
  /** A slot in the year 33658: what a corrupted item held in the probe. */
  const YEAR_33658 = Date.UTC(33658, 0, 1);
  const reach = maxLeaseAheadMs(100);

  test('what leases write stays within maxLeaseAheadMs: the horizon, the longest lease and clock skew', () => {
    expect(reach).toBe(LEASE_HORIZON_MS + MAX_LEASE * 100 + 5000);
  });

  test.each<[string, { next?: number; found?: unknown }, RegExp | undefined]>([
    ['far ahead (the year 33658)', { next: YEAR_33658, found: YEAR_33658 }, /ms ahead/],
    ['just beyond what a lease reaches', { next: T + reach + 1, found: T + reach + 1 }, /ms ahead \(at most/],
    ['negative', { next: -5, found: -5 }, /below zero: -5/],
    ['NaN', { next: NaN, found: NaN }, /not a finite number: NaN/],
    ['infinite', { next: Infinity, found: Infinity }, /not a finite number/],
    ['a string', { found: 'soon' }, /not a number: "soon"/],
    ['a wrong type', { found: { S: '1000000' } }, /not a number: \{"S":"1000000"\}/],
    ['busy, within what a lease reaches', { next: T + reach, found: T + reach }, undefined],
    ['stale (a lane idle for a while)', { next: T - 60_000, found: T - 60_000 }, undefined],
    ['no item yet', {}, undefined],
  ])('a value read %s: %p', (_, read, expected) => {
    const found = implausibility(read, T, reach);
    if (expected === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(expected);
  });

  test.each<[string, Parameters<typeof afterLease>[1], ReturnType<typeof afterLease>]>([
    [
      'repaired by this lease: its slots, no fallback',
      { slots: [T, T + 100], next: T + 200, implausible: 'below zero: -5', repaired: true },
      { pool: [T - 50, T, T + 100], busyUntil: T + 200, fallbackUntil: undefined },
    ],
    [
      'repaired by another container first: slots after its, no fallback',
      { slots: [T + 50], next: T + 150, implausible: 'below zero: -5', repaired: false },
      { pool: [T - 50, T + 50], busyUntil: T + 150, fallbackUntil: undefined },
    ],
    [
      'not repaired, no slots: the static share until IMPLAUSIBLE_FALLBACK_MS from now',
      { slots: [], implausible: 'not a finite number: NaN', repaired: false },
      { pool: [T - 50], busyUntil: undefined, fallbackUntil: T + IMPLAUSIBLE_FALLBACK_MS },
    ],
    [
      'a plausible lane taken beyond the sends: no slots, no fallback, the lane busy',
      { slots: [], busyUntil: T + 900 },
      { pool: [T - 50], busyUntil: T + 900, fallbackUntil: undefined },
    ],
  ])('a lease answers: %s', (_, answer, expected) => {
    expect(afterLease([T - 50], answer, T)).toEqual(expected);
  });

  test('an unrepaired item: the static share until the fallback ends, then a lease tries again', () => {
    const after = afterLease([], { slots: [], implausible: 'below zero: -5', repaired: false }, T);
    const fallbackUntil = after.fallbackUntil! - T;
    const sends = [send('n1')];
    expect(step(state({ now: fallbackUntil - 1, sends, fallbackUntil })).kind).toBe('static');
    expect(
      summary(step(state({ now: fallbackUntil, sends, fallbackUntil, busyUntil: { high: fallbackUntil + 400 } }))),
    ).toEqual(decided({ requests: [`lease 1 of normal for normal from ${fallbackUntil + LEASE_HORIZON_MS}`] }));
  });
});

describe('the rates', () => {
  test.each([
    [14, 500],
    [2, 0],
    [4, Math.round((2 / 3.8) * 1000 - 100)],
  ])('a slot may be used up to its lag late (maxSendRate %i: %i ms)', (rate, lag) => {
    expect(Math.round(slotLagMs(rate))).toBe(lag);
  });
});
