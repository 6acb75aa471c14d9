/**
 * verify's checks over probes that play a pipeline: what passes, what fails and with which fix,
 * and that the canary is awaited until delivered or the time is up (on a virtual clock).
 */
import type { DeliveryReport } from '../../../../lambdas/kernel/ledger/schema';
import { canaryKey, formatResult, verifyPipeline, type VerifyProbes } from '../../../../lib/cli/verify';

function report(status: DeliveryReport['status'], types: string[] = []): DeliveryReport {
  return { key: 'k', status, events: types.map((type) => ({ type, at: '2026-12-03T00:00:00Z' })) };
}

/** A healthy pipeline whose canary is delivered after `after` looks; `change` alters a probe. */
function probes(change: Partial<VerifyProbes> = {}, reports: DeliveryReport[] = []): VerifyProbes {
  const sequence = reports.length > 0 ? reports : [report('sent', ['Send']), report('delivered', ['Send', 'Delivery'])];
  let look = 0;
  return {
    description: 'test pipeline',
    sendSources: async () => [
      { id: 'a', enabled: true },
      { id: 'b', enabled: true },
    ],
    deadLetters: async () => [
      { queue: 'send', messages: 0 },
      { queue: 'ledger', messages: 0 },
    ],
    ledgerRedrive: async () => ({ id: 'the mapping m-1', state: 'Disabled', on: false }),
    publishCanary: async () => undefined,
    report: async () => sequence[Math.min(look++, sequence.length - 1)] as DeliveryReport,
    reputation: async () => ({ account: true, configurationSet: true }),
    alarmsFiring: async () => [],
    ...change,
  };
}

function clock() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms) };
}

const options = (extra = {}) => ({ timeoutMs: 60_000, pollMs: 1000, canaryKey: 'verify-x', ...clock(), ...extra });

test('a healthy pipeline passes every check', async () => {
  const results = await verifyPipeline(probes(), options());
  expect(results.map((r) => r.status)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass', 'pass']);
});

test('a paused event source fails, naming it, with resume as the fix', async () => {
  const results = await verifyPipeline(
    probes({
      sendSources: async () => [
        { id: 'high', enabled: false },
        { id: 'work', enabled: true },
      ],
    }),
    options(),
  );
  expect(results[0]).toMatchObject({ status: 'fail', detail: expect.stringContaining('high') });
  expect(results[0]?.fix).toContain('email-pipeline resume');
});

test('a DLQ with messages fails, saying which and how many', async () => {
  const results = await verifyPipeline(
    probes({ deadLetters: async () => [{ queue: 'ledger', messages: 3 }] }),
    options(),
  );
  expect(results[1]).toMatchObject({ status: 'fail', detail: 'ledger: 3' });
});

test('a canary the ledger never confirms fails after the timeout and points at the caller identity', async () => {
  const c = clock();
  const results = await verifyPipeline(probes({}, [report('in-progress'), report('sent')]), {
    ...options(),
    ...c,
    timeoutMs: 10_000,
  });
  // sent with no Send event recorded: the ledger did not take SES's events
  expect(results[3]).toMatchObject({ status: 'fail' });
  expect(results[3]?.detail).toContain('no Send event');
  expect(results[3]?.fix).toContain('caller identity');
  expect(c.now()).toBeGreaterThanOrEqual(10_000);
});

test('a canary that is delivered stops the wait at once', async () => {
  const c = clock();
  await verifyPipeline(probes(), { ...options(), ...c });
  expect(c.now()).toBe(1000);
});

test('a dead-lettered canary fails with the dlq command as the fix', async () => {
  const results = await verifyPipeline(probes({}, [report('dead-lettered', ['DeadLettered'])]), options());
  expect(results[3]).toMatchObject({ status: 'fail' });
  expect(results[3]?.fix).toContain('dlq list');
});

test('reputation metrics only for the account fail: the alarms read the configuration set too', async () => {
  const results = await verifyPipeline(
    probes({ reputation: async () => ({ account: true, configurationSet: false }) }),
    options(),
  );
  expect(results[4]).toMatchObject({ status: 'fail', detail: expect.stringContaining('configuration set') });
});

test('without CloudWatch the metric and alarm checks are skipped with the reason, not failed', async () => {
  const local: VerifyProbes = { ...probes(), reputation: undefined, alarmsFiring: undefined };
  const results = await verifyPipeline({ ...local, skipReason: 'the local pipeline has no CloudWatch' }, options());
  expect(results.slice(4).map((r) => [r.status, r.detail])).toEqual([
    ['skip', 'the local pipeline has no CloudWatch'],
    ['skip', 'the local pipeline has no CloudWatch'],
  ]);
});

test('alarms in ALARM fail, named', async () => {
  const results = await verifyPipeline(probes({ alarmsFiring: async () => ['Mail-page-ledgerSilent'] }), options());
  expect(results[5]).toMatchObject({ status: 'fail', detail: 'Mail-page-ledgerSilent' });
});

test('a probe that throws fails its check with the error, and the others still run', async () => {
  const results = await verifyPipeline(
    probes({
      deadLetters: async () => {
        throw new Error('AccessDenied: sqs:GetQueueAttributes');
      },
    }),
    options(),
  );
  expect(results[1]).toMatchObject({ status: 'fail', detail: expect.stringContaining('AccessDenied') });
  expect(results).toHaveLength(6);
  expect(results[3]?.status).toBe('pass');
});

test('the ledger DLQ mapping left on fails, saying its state, with --stop as the fix; off, it passes', async () => {
  const on = await verifyPipeline(
    probes({ ledgerRedrive: async () => ({ id: 'the mapping m-1', state: 'Enabled', on: true }) }),
    options(),
  );
  expect(on[2]).toMatchObject({ status: 'fail', detail: expect.stringContaining('the mapping m-1: Enabled') });
  expect(on[2]?.detail).toContain('dlq redrive --queue ledger');
  expect(on[2]?.fix).toContain('email-pipeline dlq redrive --queue ledger --stop');
  // The other checks still run and hold.
  expect(on.filter((r) => r.status === 'fail')).toHaveLength(1);
  const off = await verifyPipeline(probes(), options());
  expect(off[2]).toMatchObject({ status: 'pass', detail: 'the mapping m-1: Disabled' });
});

test('a stack without the ledger DLQ mapping output skips that check, saying why', async () => {
  const results = await verifyPipeline({ ...probes(), ledgerRedrive: undefined }, options());
  expect(results[2]).toMatchObject({ status: 'skip', detail: expect.stringContaining('LedgerDeadLetterMappingId') });
});

test('a failed result prints its fix on a second line; a passed one does not', () => {
  expect(formatResult({ name: 'n', status: 'fail', detail: 'd', fix: 'f' })).toEqual(['FAIL  n: d', '      fix: f']);
  expect(formatResult({ name: 'n', status: 'pass', detail: 'd', fix: 'f' })).toEqual(['ok    n: d']);
});

test('canary keys are dated and distinct', () => {
  const at = new Date('2026-12-03T15:16:49.123Z');
  expect(canaryKey(at, 'ab12')).toBe('verify-20261203T151649-ab12');
  expect(canaryKey(at, 'ab12')).not.toBe(canaryKey(at, 'cd34'));
});

describe('SES tenants', () => {
  const tenant = (team: string, sendingStatus?: string) => ({
    team,
    tenantName: `mail-${team}`,
    ...(sendingStatus ? { sendingStatus } : {}),
  });

  test('without a tenant there is no tenant check at all: the checks are as they were', async () => {
    const results = await verifyPipeline(probes(), options());
    expect(results).toHaveLength(6);
    expect(results.some((r) => r.name.includes('tenant'))).toBe(false);
  });

  test('tenants that may send (ENABLED, or REINSTATED despite findings) pass, each named with its status', async () => {
    const results = await verifyPipeline(
      probes({ tenants: async () => [tenant('billing', 'ENABLED'), tenant('security', 'REINSTATED')] }),
      options(),
    );
    expect(results).toHaveLength(7);
    expect(results[6]).toMatchObject({
      status: 'pass',
      detail: 'billing (mail-billing): ENABLED, security (mail-security): REINSTATED',
    });
  });

  test('a DISABLED tenant fails, naming its team, with the runbook as the fix', async () => {
    const results = await verifyPipeline(
      probes({ tenants: async () => [tenant('billing', 'ENABLED'), tenant('security', 'DISABLED')] }),
      options(),
    );
    expect(results[6]).toMatchObject({
      status: 'fail',
      detail: 'billing (mail-billing): ENABLED, security (mail-security): DISABLED',
    });
    expect(results[6]?.fix).toContain('SES refuses the sends of security:');
    expect(results[6]?.fix).toContain('sesTenantPaused');
  });

  test('a tenant SES answers without a status fails: nothing says it may send', async () => {
    const results = await verifyPipeline(probes({ tenants: async () => [tenant('billing')] }), options());
    expect(results[6]).toMatchObject({ status: 'fail', detail: 'billing (mail-billing): no status' });
  });

  test('a GetTenant that fails (no permission) fails the check with the error, after the others', async () => {
    const results = await verifyPipeline(
      probes({
        tenants: async () => {
          throw new Error('AccessDeniedException: not authorized to perform ses:GetTenant');
        },
      }),
      options(),
    );
    expect(results.slice(0, 6).every((r) => r.status === 'pass')).toBe(true);
    expect(results[6]).toMatchObject({ status: 'fail', detail: expect.stringContaining('ses:GetTenant') });
  });
});
