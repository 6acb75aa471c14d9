/**
 * `email-pipeline verify` without the process around it: the checks that prove a deployed (or
 * local) pipeline works end to end, in order, each with its result and, when it fails, what to do.
 *
 * Some facts the pipeline rests on are known only once it is deployed on the user's account: the
 * form of SES's `ses:caller-identity` tag on real events (the ledger trusts an event only when it
 * names the send role) and the dimension SES publishes per-configuration-set reputation metrics
 * under. A canary to SES's mailbox simulator whose `Send` and `Delivery` events move its key to
 * `delivered` proves the first (the ledger records only events it trusts); ListMetrics proves the
 * second. The checks talk to the pipeline through {@link VerifyProbes}, so the same sequence runs
 * against AWS and against `npm start`.
 */
import type { DeliveryReport } from '../../lambdas/kernel/ledger/schema';

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  readonly name: string;
  readonly status: CheckStatus;
  /** What was seen. */
  readonly detail: string;
  /** What to do when it failed. */
  readonly fix?: string;
}

/** What a dead-letter queue holds. */
export interface DeadLetterCount {
  readonly queue: string;
  readonly messages: number;
}

/** Which reputation series CloudWatch has for the account and for the pipeline's configuration set. */
export interface ReputationSeries {
  readonly account: boolean;
  readonly configurationSet: boolean;
}

/** One team's SES tenant and its sending status as SES's GetTenant reports it (`ENABLED`, `DISABLED`, `REINSTATED`). */
export interface TenantStatus {
  readonly team: string;
  readonly tenantName: string;
  /** Undefined when SES answered without one. */
  readonly sendingStatus?: string;
}

/** How verify reaches the pipeline. A probe left undefined is a check that cannot run there (skipped, with why). */
export interface VerifyProbes {
  /** Where the checks run, said in the summary (`stack MailStack, pipeline Billing`). */
  readonly description: string;
  /** Every event source of the send function, and whether it is on. */
  sendSources(): Promise<ReadonlyArray<{ readonly id: string; readonly enabled: boolean }>>;
  /** Messages in each DLQ of the pipeline. */
  deadLetters(): Promise<readonly DeadLetterCount[]>;
  /**
   * The ledger function's mapping of the ledger DLQ (disabled but while `dlq redrive --queue
   * ledger` runs): its id, its state, and whether the ledger function reads the DLQ in that state;
   * locally the flag file. Undefined where the stack has none.
   */
  readonly ledgerRedrive?: () => Promise<{ readonly id: string; readonly state: string; readonly on: boolean }>;
  /** Publishes the canary (a mail to SES's success simulator) under `key`. */
  publishCanary(key: string): Promise<void>;
  /** The key's delivery status now. */
  report(key: string): Promise<DeliveryReport>;
  /** The reputation series CloudWatch lists; undefined where there is no CloudWatch (locally). */
  readonly reputation?: () => Promise<ReputationSeries>;
  /** Names of the pipeline's alarms in ALARM; undefined where there are no alarms (locally, or no monitoring). */
  readonly alarmsFiring?: () => Promise<readonly string[]>;
  /** Each team's SES tenant with its sending status; undefined where no team has a tenant (no check then). */
  readonly tenants?: () => Promise<readonly TenantStatus[]>;
  /** Why the optional probes are missing, said in their skipped lines. */
  readonly skipReason?: string;
}

export interface VerifyOptions {
  /** How long the canary may take to reach `delivered`, in ms. */
  readonly timeoutMs: number;
  /** Between two looks at the canary's status, in ms. */
  readonly pollMs: number;
  /** The canary's dedupe key. */
  readonly canaryKey: string;
  /** Each result as it is known (the command prints it at once). */
  readonly onResult?: (result: CheckResult) => void;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function failure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function checkSending(probes: VerifyProbes): Promise<CheckResult> {
  const name = 'sending is on (the send function’s event sources enabled)';
  const sources = await probes.sendSources();
  const off = sources.filter((s) => !s.enabled);
  if (sources.length === 0) {
    return {
      name,
      status: 'fail',
      detail: 'the send function has no SQS event source',
      fix: 'the stack is not fully deployed: run cdk deploy again and look at its events',
    };
  }
  if (off.length > 0) {
    return {
      name,
      status: 'fail',
      detail: `${off.length} of ${sources.length} paused (${off.map((s) => s.id).join(', ')})`,
      fix: 'sending is paused: email-pipeline resume (after email-pipeline pause --show says why it was paused)',
    };
  }
  return { name, status: 'pass', detail: `${sources.length} enabled` };
}

async function checkDeadLetters(probes: VerifyProbes): Promise<CheckResult> {
  const name = 'dead-letter queues are empty';
  const counts = await probes.deadLetters();
  const full = counts.filter((c) => c.messages > 0);
  if (full.length === 0) return { name, status: 'pass', detail: `${counts.length} queues, no message` };
  return {
    name,
    status: 'fail',
    detail: full.map((c) => `${c.queue}: ${c.messages}`).join(', '),
    fix: 'email-pipeline dlq list --queue <queue> --summary shows why (callbacks: email-pipeline callbacks list); the operators’ guide says which codes to redrive',
  };
}

async function checkLedgerRedriveOff(probes: VerifyProbes): Promise<CheckResult> {
  const name = 'the ledger DLQ’s redrive mapping is off (no redrive left it on)';
  if (!probes.ledgerRedrive) {
    return { name, status: 'skip', detail: 'the stack has no LedgerDeadLetterMappingId output (deploy this version)' };
  }
  const { id, state, on } = await probes.ledgerRedrive();
  if (!on) return { name, status: 'pass', detail: `${id}: ${state}` };
  return {
    name,
    status: 'fail',
    detail:
      `${id}: ${state}. A dlq redrive --queue ledger turns it on only while it runs: one was stopped before it could ` +
      'turn it off (or one is running now), and the ledger function keeps reading its DLQ, retrying the events it ' +
      'fails on until they expire',
    fix: 'unless a redrive is running now: email-pipeline dlq redrive --queue ledger --stop',
  };
}

/** Reads the canary's status until it is delivered, another final status, or the time is up. */
async function checkCanary(probes: VerifyProbes, options: VerifyOptions): Promise<CheckResult> {
  const name = 'a canary to SES’s mailbox simulator is delivered, and its SES events are trusted';
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  await probes.publishCanary(options.canaryKey);
  const deadline = now() + options.timeoutMs;
  let report: DeliveryReport | undefined;
  for (;;) {
    report = await probes.report(options.canaryKey);
    if (!['unknown', 'in-progress', 'sent', 'delayed', 'scheduled'].includes(report.status)) break;
    if (now() >= deadline) break;
    await sleep(options.pollMs);
  }
  const types = report.events.map((e) => e.type);
  const seen = `key ${options.canaryKey}: ${report.status}${types.length > 0 ? ` (events: ${types.join(', ')})` : ''}`;
  if (report.status === 'delivered' && types.includes('Send') && types.includes('Delivery')) {
    return { name, status: 'pass', detail: seen };
  }
  const seconds = Math.round(options.timeoutMs / 1000);
  if (report.status === 'unknown' || report.status === 'in-progress') {
    return {
      name,
      status: 'fail',
      detail: `${seen} after ${seconds} s: the send function did not finish the canary`,
      fix: 'look at the send function’s log (SendLogGroupName) for the key; check the SES identity is verified and the account out of the sandbox or maxSendRate at its rate (1 in the sandbox)',
    };
  }
  if (report.status === 'dead-lettered') {
    return {
      name,
      status: 'fail',
      detail: seen,
      fix: 'email-pipeline dlq list --key <the key> says why (an unverified identity gives MessageRejected)',
    };
  }
  if (!types.includes('Send')) {
    return {
      name,
      status: 'fail',
      detail: `${seen} after ${seconds} s: the ledger recorded no Send event`,
      fix:
        'SES events do not reach the ledger, or the ledger does not trust them. The metric LedgerUntrustedEvents ' +
        'and the ledger function’s log say which: an event refused for its caller identity means SES names the ' +
        'sender differently from the send role’s name on this account (see docs/troubleshooting.md, "the ledger is silent")',
    };
  }
  return {
    name,
    status: 'fail',
    detail: `${seen} after ${seconds} s: no Delivery event`,
    fix: 'SES sends events best-effort: run verify again; if Delivery never comes, check the configuration set’s event destination',
  };
}

async function checkReputation(probes: VerifyProbes): Promise<CheckResult> {
  const name = 'reputation metrics exist under the dimension the alarms read';
  if (!probes.reputation) return { name, status: 'skip', detail: probes.skipReason ?? 'no CloudWatch here' };
  const series = await probes.reputation();
  if (series.configurationSet) return { name, status: 'pass', detail: 'per configuration set (ses:configuration-set)' };
  return {
    name,
    status: 'fail',
    detail: series.account
      ? 'the account’s series exists, the configuration set’s does not'
      : 'no reputation series yet, for the account or the configuration set',
    fix:
      'SES publishes reputation metrics some time after a set first sends: run verify again in a few hours. If the ' +
      'account’s series exists and the set’s never does, the alarms still fire on the account’s rate (they take the ' +
      'larger of both); report it, since the per-set dimension is then not what this version reads',
  };
}

async function checkAlarms(probes: VerifyProbes): Promise<CheckResult> {
  const name = 'no alarm of the pipeline in ALARM';
  if (!probes.alarmsFiring) return { name, status: 'skip', detail: probes.skipReason ?? 'no alarms here' };
  const firing = await probes.alarmsFiring();
  if (firing.length === 0) return { name, status: 'pass', detail: 'none firing' };
  return {
    name,
    status: 'fail',
    detail: firing.join(', '),
    fix: 'each alarm’s description links its runbook (docs/operators.md)',
  };
}

/** Statuses under which SES sends for a tenant (REINSTATED: despite active reputation findings). */
const SENDING = new Set(['ENABLED', 'REINSTATED']);

async function checkTenants(tenants: () => Promise<readonly TenantStatus[]>): Promise<CheckResult> {
  const name = 'every team’s SES tenant may send (GetTenant’s SendingStatus)';
  const statuses = await tenants();
  const detail = statuses.map((t) => `${t.team} (${t.tenantName}): ${t.sendingStatus ?? 'no status'}`).join(', ');
  const stopped = statuses.filter((t) => !SENDING.has(t.sendingStatus ?? ''));
  if (stopped.length === 0) return { name, status: 'pass', detail };
  return {
    name,
    status: 'fail',
    detail,
    fix:
      `SES refuses the sends of ${stopped.map((t) => t.team).join(', ')}: see the runbook of sesTenantPaused ` +
      '(docs/operators.md) for why (get-reputation-entity) and how sending comes back',
  };
}

/**
 * Runs every check in order (a check that throws fails with the error, and the rest still run);
 * resolves to the results.
 */
export async function verifyPipeline(probes: VerifyProbes, options: VerifyOptions): Promise<CheckResult[]> {
  const checks: Array<[string, () => Promise<CheckResult>]> = [
    ['sending is on', () => checkSending(probes)],
    ['dead-letter queues are empty', () => checkDeadLetters(probes)],
    ['the ledger DLQ redrive is off', () => checkLedgerRedriveOff(probes)],
    ['the canary', () => checkCanary(probes, options)],
    ['reputation metrics', () => checkReputation(probes)],
    ['alarms', () => checkAlarms(probes)],
  ];
  // Only where a team has an SES tenant: other pipelines keep their checks as they were.
  const { tenants } = probes;
  if (tenants) checks.push(['SES tenants', () => checkTenants(tenants)]);
  const results: CheckResult[] = [];
  for (const [name, check] of checks) {
    const result = await check().catch((error: unknown): CheckResult => ({
      name,
      status: 'fail',
      detail: `could not check: ${failure(error)}`,
      fix: 'the credentials need the permissions docs/operators.md lists for verify',
    }));
    results.push(result);
    options.onResult?.(result);
  }
  return results;
}

const MARK: Readonly<Record<CheckStatus, string>> = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' };

/** One result as lines for a person. */
export function formatResult(result: CheckResult): string[] {
  const lines = [`${MARK[result.status]}  ${result.name}: ${result.detail}`];
  if (result.status === 'fail' && result.fix) lines.push(`      fix: ${result.fix}`);
  return lines;
}

/** A dedupe key no publisher uses: the canary's. */
export function canaryKey(at: Date, random: string): string {
  return `verify-${at.toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${random}`;
}
