/**
 * Every failure class end to end, with a fault proxy in front of SES or
 * DynamoDB. Each test ends with the conservation check: every published
 * message is exactly one email or exactly one DLQ entry with a reason (and the
 * one allowed exception, a duplicate in the ambiguous window, is counted).
 */
import {
  dynamoDbThrottle,
  down,
  forwardThenReset,
  pass,
  sesInternalFailure,
  sesThrottle,
  startFaultProxy,
  status,
  type FaultProxy,
} from '../../tools/dev/local/fault-proxy';
import type { PipelineSettings } from '../../lib/settings';
import { email, metricTotals, outcomes, startTestPipeline, until, type TestPipeline } from './support';

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/**
 * A pipeline whose one consumer reaches SES and DynamoDB through fault proxies
 * (passing everything until a test tells them otherwise).
 */
async function behindProxies(
  settings: Partial<PipelineSettings> = {},
  ledger: { readonly ledger?: boolean; readonly sendConfirmationGraceSeconds?: number } = {},
): Promise<{ p: TestPipeline; ses: FaultProxy; dynamodb: FaultProxy }> {
  const [ses, dynamodb] = await Promise.all([
    startFaultProxy({ target: process.env.EMULATOR_SES_ENDPOINT ?? '' }),
    startFaultProxy({ target: process.env.EMULATOR_DYNAMODB_ENDPOINT ?? '' }),
  ]);
  running.push({ stop: () => ses.close() }, { stop: () => dynamodb.close() });
  const p = await startTestPipeline({
    settings,
    ...ledger,
    consumers: [{ env: { AWS_ENDPOINT_URL_SESV2: ses.endpoint, AWS_ENDPOINT_URL_DYNAMODB: dynamodb.endpoint } }],
  });
  running.unshift(p); // stop the consumer before the proxies
  return { p, ses, dynamodb };
}

/** Publishes one email to each label and returns the recipients. */
async function publishAll(p: TestPipeline, labels: readonly string[]): Promise<string[]> {
  const recipients = labels.map((l) => p.address(l));
  await Promise.all(recipients.map((to) => p.publish(email(to, `For ${to}`))));
  return recipients;
}

async function settled(p: TestPipeline, count: number): Promise<void> {
  await until(
    `${count} messages settled`,
    async () => {
      const done = p.decisions().filter((d) => d.decision !== 'retry').length;
      return done >= count && (await p.pipeline.isDrained());
    },
    45_000,
  );
}

function exactlyOnce(map: Map<string, { emails: number; deadLettered: number }>): void {
  for (const [recipient, outcome] of map)
    expect({ recipient, ...outcome }).toEqual({ recipient, emails: 1, deadLettered: 0 });
}

const sesError = (name: string, message: string) =>
  status(400, { 'content-type': 'application/json', 'x-amzn-errortype': name }, { message });

describe('retryable: SES throttling', () => {
  test('throttled sends back off through the queue and are each sent once when SES recovers', async () => {
    const { p, ses } = await behindProxies();
    ses.set(sesThrottle());
    const recipients = await publishAll(p, ['t1', 't2', 't3']);

    await until(
      'each message retried at least once',
      () => new Set(p.decisions('retry').map((d) => d.dedupeKey)).size === 3,
    );
    // Throttling is retried inside the SDK (safe: SES refused it) before it goes back to the queue;
    // then the circuit breaker holds the sends that had not started (not sent, for certain).
    expect(ses.counts().status).toBeGreaterThanOrEqual(3);
    expect(p.decisions('retry').some((d) => d.errorCode === 'Throttled')).toBe(true);
    expect(
      p
        .decisions('retry')
        .every((d) => d.errorClass === 'retryable' && (d.errorCode === 'Throttled' || d.errorCode === 'CircuitOpen')),
    ).toBe(true);
    ses.set(pass());

    await settled(p, 3);
    exactlyOnce(await outcomes(p, recipients));
    expect(metricTotals(p).RetryableFailures).toBeGreaterThanOrEqual(3);
  });
});

describe('ambiguous: SES outcome unknown, confirmed with the send ledger', () => {
  test('a reset after SES accepted the email is not sent again: the ledger has its Send event', async () => {
    const { p, ses } = await behindProxies({}, { ledger: true });
    ses.set((request) => (request.operation === 'SendEmail' && request.index === 0 ? forwardThenReset() : pass()));
    const [to = ''] = await publishAll(p, ['amb']);

    await settled(p, 1);
    // One attempt reached SES; the retry read the ledger instead of sending.
    expect(ses.log().filter((e) => e.operation === 'SendEmail')).toHaveLength(1);
    const [retry] = p.decisions('retry');
    expect(retry).toEqual(expect.objectContaining({ errorClass: 'ambiguous', errorCode: 'AmbiguousSend' }));
    expect(retry?.dedupeKey).toBeTruthy();
    const [sent] = p.decisions('sent');
    expect(sent).toEqual(expect.objectContaining({ confirmedBySesEvent: true, dedupeKey: retry?.dedupeKey }));
    const totals = metricTotals(p);
    expect(totals.AmbiguousSends).toBe(1);
    expect(totals.ConfirmedBySesEvent).toBe(1);
    expect(totals.UnconfirmedResends).toBeUndefined();
    expect((await outcomes(p, [to])).get(to)).toEqual({ emails: 1, deadLettered: 0 });
  });

  test('a 500 that SES never accepted waits out the grace for an event, then is sent again, counted', async () => {
    const { p, ses } = await behindProxies({}, { ledger: true, sendConfirmationGraceSeconds: 3 });
    ses.set((request) => (request.index === 0 ? sesInternalFailure() : pass()));
    const recipients = await publishAll(p, ['five-hundred']);

    await settled(p, 1);
    expect(ses.log().filter((e) => e.operation === 'SendEmail')).toHaveLength(2);
    const [first, ...waits] = p.decisions('retry');
    expect(first).toEqual(expect.objectContaining({ errorClass: 'ambiguous' }));
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits.every((d) => d.errorClass === 'retryable' && d.errorCode === 'AwaitingSendConfirmation')).toBe(true);
    const totals = metricTotals(p);
    expect(totals.UnconfirmedResends).toBe(1);
    expect(totals.ConfirmedBySesEvent).toBeUndefined();
    exactlyOnce(await outcomes(p, recipients));
  });
});

describe('systemic: the account cannot send', () => {
  test('sending paused backs off as systemic and sends once sending resumes', async () => {
    const { p, ses } = await behindProxies();
    ses.set(sesError('SendingPausedException', 'Sending is paused for this account.'));
    const recipients = await publishAll(p, ['paused']);

    await until('a systemic retry', () => p.decisions('retry').length >= 1);
    expect(p.decisions('retry')[0]).toEqual(
      expect.objectContaining({ errorClass: 'systemic', errorCode: 'SendingPausedException' }),
    );
    expect(p.decisions('dead-lettered')).toEqual([]);
    ses.set(pass());

    await settled(p, 1);
    exactlyOnce(await outcomes(p, recipients));
    expect(metricTotals(p).SystemicFailures).toBeGreaterThanOrEqual(1);
  });
});

describe('permanent: SES refuses the email', () => {
  test('a rejected email goes to the DLQ at once with its reason while its neighbours are sent', async () => {
    const { p, ses } = await behindProxies();
    ses.set((request) =>
      request.body.toString().includes('rejected@')
        ? sesError('MessageRejected', 'Email address is not verified.')
        : pass(),
    );
    const [good1 = '', rejected = '', good2 = ''] = await publishAll(p, ['ok1', 'rejected', 'ok2']);

    await settled(p, 3);
    const map = await outcomes(p, [good1, rejected, good2], 1);
    expect(map.get(good1)).toEqual({ emails: 1, deadLettered: 0 });
    expect(map.get(good2)).toEqual({ emails: 1, deadLettered: 0 });
    expect(map.get(rejected)).toEqual({ emails: 0, deadLettered: 1 });
    expect(p.decisions('dead-lettered')).toEqual([
      expect.objectContaining({ errorCode: 'MessageRejected', receiveCount: 1 }),
    ]);
  });
});

describe('idempotency store outage', () => {
  test('fail-closed (default): nothing is sent while DynamoDB is down, and everything is sent once after', async () => {
    const { p, dynamodb } = await behindProxies();
    dynamodb.set(down());
    const recipients = await publishAll(p, ['d1', 'd2', 'd3']);

    await until(
      'every message waiting on the store',
      () => new Set(p.decisions('retry').map((d) => d.dedupeKey)).size === 3,
    );
    expect(p.decisions('retry').every((d) => d.errorCode === 'StoreUnavailable')).toBe(true);
    expect(await p.emails()).toEqual([]);
    dynamodb.set(pass());

    await settled(p, 3);
    exactlyOnce(await outcomes(p, recipients));
  });

  test('throttled DynamoDB is retried like an outage, never sent unprotected', async () => {
    const { p, dynamodb } = await behindProxies();
    dynamodb.set(dynamoDbThrottle());
    const recipients = await publishAll(p, ['thr']);

    await until('a retry on the store', () => p.decisions('retry').length >= 1);
    expect(await p.emails()).toEqual([]);
    dynamodb.set(pass());
    await settled(p, 1);
    exactlyOnce(await outcomes(p, recipients));
  });

  test('fail-open (opt-in): sends without the check while DynamoDB is down, each counted', async () => {
    const { p, dynamodb } = await behindProxies({ failOpen: true });
    dynamodb.set(down());
    const recipients = await publishAll(p, ['o1', 'o2']);

    await settled(p, 2);
    exactlyOnce(await outcomes(p, recipients));
    expect(p.decisions('sent').every((d) => d.failOpen === true)).toBe(true);
    expect(metricTotals(p).FailOpenSends).toBe(2);
  });
});

test('fail-open: an email SES rejects while DynamoDB is down still goes to the DLQ with its reason', async () => {
  const { p, ses, dynamodb } = await behindProxies({ failOpen: true });
  ses.set((request) =>
    request.body.toString().includes('refused@')
      ? sesError('MessageRejected', 'Email address is not verified.')
      : pass(),
  );
  dynamodb.set(down());
  const [ok = '', refused = ''] = await publishAll(p, ['fine', 'refused']);

  await settled(p, 2);
  const map = await outcomes(p, [ok, refused], 1);
  expect(map.get(ok)).toEqual({ emails: 1, deadLettered: 0 });
  expect(map.get(refused)).toEqual({ emails: 0, deadLettered: 1 });
  expect(p.decisions('dead-lettered')).toEqual([expect.objectContaining({ errorCode: 'MessageRejected' })]);
});

describe('poison messages', () => {
  test('a message that keeps failing is retried until its retry budget is spent, then dead-lettered with the last error', async () => {
    const budget = 6;
    const { p, ses } = await behindProxies({ maxReceiveCount: 5, retryBudgetSeconds: budget });
    ses.set((request) => (request.body.toString().includes('poison@') ? sesInternalFailure() : pass()));
    const [good1 = '', poison = '', good2 = ''] = await publishAll(p, ['n1', 'poison', 'n2']);

    await until(
      'the poison message moved to the DLQ',
      async () => {
        const dlq = await p.pipeline.queueDepth('dlq');
        return dlq.visible === 1 && (await p.pipeline.isDrained());
      },
      45_000,
    );
    const poisonRetries = p.decisions('retry').filter((d) => d.to?.[0]?.startsWith('p***'));
    // Each retry is a new delayed copy, decided on in its first receive, one attempt up.
    expect(poisonRetries.map((d) => d.receiveCount)).toEqual(poisonRetries.map(() => 1));
    expect(poisonRetries.map((d) => d.attempt)).toEqual(poisonRetries.map((_, i) => i + 1));
    const [letter] = p.decisions('dead-lettered');
    expect(letter).toEqual(expect.objectContaining({ errorCode: 'RetryBudgetExhausted' }));
    // An ambiguous send is retried through the ledger: after the first, the attempts wait for an
    // SES event that never comes (SES answered 500 without accepting), so either can be the last.
    expect(String(letter?.reason)).toMatch(
      new RegExp(`past the retry budget of ${budget} s; last error (AmbiguousSend|AwaitingSendConfirmation): `),
    );
    // Never before the budget: the first copy reached the queue at least `budget` seconds earlier.
    expect(
      Number(poisonRetries.at(-1)?.ageSeconds) + Number(poisonRetries.at(-1)?.retryInSeconds),
    ).toBeGreaterThanOrEqual(budget - 1);
    const map = await outcomes(p, [good1, poison, good2], 1);
    expect(map.get(good1)).toEqual({ emails: 1, deadLettered: 0 });
    expect(map.get(good2)).toEqual({ emails: 1, deadLettered: 0 });
    expect(map.get(poison)).toEqual({ emails: 0, deadLettered: 1 });
  });
});
