/**
 * `npm run bench`: what the deduplication costs, measured on the local stack in one run.
 *
 *   1. end-to-end throughput, dedupe on vs off (consumer processes, real handler bundle)
 *   2. DynamoDB requests per unique message and per duplicate, counted at the SDK
 *   3. one batch with SES answering in 100 ms: records in parallel vs one after another
 *   4. handler bundle size and module initialisation time vs a bare handler
 *   5. cost per million emails at list prices, from the figures above
 *   5b. the send ledger's own cost: its handler on a Send + Delivery per email (ledger.ts)
 *   6. client CPU per record: the handler in fresh processes vs the hand-signed floor (client-cpu.ts)
 *
 * Prints a table and writes the same figures to .local/bench.json. See BENCHMARKS.md.
 * BENCH_MESSAGES sets the messages per throughput run (default 2000).
 *
 * `npm run bench -- pacing` runs only the pacing benchmark: 1,000 emails (BENCH_PACING_EMAILS)
 * into a local SES that allows 20 recipients a second (BENCH_PACING_RATE), the pipeline's
 * maxSendRate the same, two consumers; writes .local/bench-pacing.json.
 *
 * `npm run bench -- --only traffic` (or `-- traffic`) runs only the traffic benchmark (traffic.ts): rate
 * use of a burst with 1, 2 and maxConcurrency (10) consumers against a local SES of 14/s
 * (BENCH_TRAFFIC_RATE, BENCH_TRAFFIC_RATE_EMAILS, BENCH_TRAFFIC_CONTAINERS), then publish-to-accepted
 * latency at a steady half rate and in a normal burst (BENCH_TRAFFIC_BURST, default 1000) with high
 * emails published during it (BENCH_TRAFFIC_HIGH every BENCH_TRAFFIC_HIGH_EVERY s); writes
 * .local/bench-traffic.json.
 *
 * `npm run bench -- ledger` runs only the ledger measurement (5b) and its cost; writes
 * .local/bench-ledger.json.
 *
 * `npm run bench -- bundle` runs only the bundle size and init measurement (4), no emulators;
 * writes .local/bench-bundle.json.
 *
 * `npm run bench -- cpu` runs only the client-CPU measurement (6): CPU per record of the
 * handler in fresh processes against the hand-signed floor (client-cpu.ts), on DynamoDB Local
 * alone; writes .local/bench-cpu.json. BENCH_CPU_RUNS sets the processes per variant (default 3).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { measureBatchLatency } from './batch-latency';
import { measureBundle } from './bundle';
import { measureClientCpu, type ClientCpuResult } from './client-cpu';
import { costModel, ledgerCostModel } from './cost';
import { cpuBetween, sampleCpu } from './cpu';
import { measureDynamoDbRequests } from './dynamodb-requests';
import { createInProcessStack } from './in-process';
import { ledgerCostInputs, measureLedger } from './ledger';
import { formatBundle, formatClientCpu, formatLedger, formatTable, machine, type BenchResult } from './report';
import { measureThroughput } from './throughput';
import { formatPacing, measurePacing } from './pacing';
import { formatTraffic, measureLatency, measureRateUse } from './traffic';
import { buildBundles } from '../local/build';
import { LOCAL_DIR } from '../local/paths';
import {
  ANY_FREE_PORTS,
  checkJava,
  ensureDynamoDbLocal,
  startDynamoDbLocal,
  startEmulators,
  type EmulatorEndpoints,
} from '../local/emulators';
import { emulatorConfig } from '../local/emulator-config';
import { loadLocalSettings } from '../local/settings';
import { LEDGER_FUNCTIONS } from '../../../lib/construct/ledger/send-ledger';
import type { ResolvedSettings } from '../../../lib/settings';

/**
 * `--quick` (what CI runs, so the benchmark cannot break unseen): every section, on fewer messages
 * and rounds. Its figures are a smoke test, not the ones BENCHMARKS.md quotes.
 */
const QUICK = process.argv.includes('--quick');
const THROUGHPUT_MESSAGES = Number(process.env.BENCH_MESSAGES ?? (QUICK ? 100 : 2000));
const THROUGHPUT_ROUNDS = QUICK ? 1 : 4; // on, off, off, on, on, off, off, on
const CONSUMERS = 2;
const DYNAMODB_MESSAGES = 100;
const SES_LATENCY_MS = 100;
const BATCH_REPETITIONS = QUICK ? 2 : 7;
const INIT_RUNS = QUICK ? 3 : 15;
/** The ledger measurement: emails per round (Send + Delivery each) and timed rounds after a warm-up. */
const LEDGER_EMAILS_PER_ROUND = 50;
const LEDGER_ROUNDS = QUICK ? 1 : 5;
const LEDGER_OPTIONS = {
  batchSize: LEDGER_FUNCTIONS.batchSize,
  memoryMb: LEDGER_FUNCTIONS.memorySizeMb,
  emailsPerRound: LEDGER_EMAILS_PER_ROUND,
  rounds: LEDGER_ROUNDS,
};
const LEDGER_FILE = path.join(LOCAL_DIR, 'bench-ledger.json');

/** Client CPU (6): fresh processes per variant; records measured as a new container; warm-up, then the steady window. */
const CPU_RUNS = Number(process.env.BENCH_CPU_RUNS ?? (QUICK ? 1 : 3));
const CPU_FIRST_RECORDS = 100;
const CPU_WARM_UP_RECORDS = 1500;
const CPU_STEADY_RECORDS = 1000;
const CPU_FILE = path.join(LOCAL_DIR, 'bench-cpu.json');

const BENCH_DIR = path.join(LOCAL_DIR, 'bench');

/**
 * The settings of every dedupe measurement (1-4, 6): no batching window, so a batch never waits to
 * fill, and pacing off in effect: they measure the dedupe, not SES's rate (see the pacing benchmark).
 */
function dedupeBenchSettings(): ResolvedSettings {
  return loadLocalSettings({ maxBatchingWindowSeconds: 0, functionTimeoutSeconds: 5, maxSendRate: 100_000 });
}
const RESULT_FILE = path.join(LOCAL_DIR, 'bench.json');

// The in-process handlers' metrics would only print EMF lines.
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

function step(text: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${text}\n`);
}

const started = performance.now();

/** Runs one measurement and records the CPU share other processes took meanwhile. */
const othersShare: Record<string, number> = {};
async function section<T>(name: string, consumerBundle: string, body: () => Promise<T>): Promise<T> {
  const before = sampleCpu(consumerBundle);
  const value = await body();
  const after = sampleCpu(consumerBundle);
  if (before && after) othersShare[name] = cpuBetween(before, after, 1).othersBusyShare;
  return value;
}

const PACING_EMAILS = Number(process.env.BENCH_PACING_EMAILS ?? 1000);
const PACING_RATE = Number(process.env.BENCH_PACING_RATE ?? 20);
const PACING_CONSUMERS = 2;
const PACING_FILE = path.join(LOCAL_DIR, 'bench-pacing.json');

async function pacingMain(): Promise<void> {
  // maxConcurrency = the consumers running: each paces to maxSendRate / maxConcurrency.
  const settings = loadLocalSettings({
    maxBatchingWindowSeconds: 0,
    maxSendRate: PACING_RATE,
    maxConcurrency: PACING_CONSUMERS,
  });
  await Promise.all([checkJava(), ensureDynamoDbLocal()]);
  step('building bundles');
  const bundles = await buildBundles(path.join(BENCH_DIR, 'build'));
  step('starting emulators');
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS });
  try {
    step(`pacing: ${PACING_EMAILS} emails into a local SES limited to ${PACING_RATE}/s, ${PACING_CONSUMERS} consumers`);
    const pacing = await measurePacing({
      endpoints: emulators.endpoints,
      bundles,
      settings,
      emails: PACING_EMAILS,
      consumers: PACING_CONSUMERS,
    });
    await writeReport(PACING_FILE, 'npm run bench -- pacing', { pacing });
    console.log(formatPacing(pacing));
    console.log(`\nWrote ${path.relative(process.cwd(), PACING_FILE)}`);
  } finally {
    await emulators.stop();
  }
}

/** The traffic benchmark (traffic.ts): rate use with 1, 2 and maxConcurrency containers, and latency per lane. */
const TRAFFIC_RATE = Number(process.env.BENCH_TRAFFIC_RATE ?? 14);
const TRAFFIC_RATE_EMAILS = Number(process.env.BENCH_TRAFFIC_RATE_EMAILS ?? 400);
/** 5c: emails of the burst whose lease writes the cost counts. */
const LEASE_EMAILS = Number(process.env.BENCH_LEASE_EMAILS ?? (QUICK ? 40 : 200));
const TRAFFIC_BURST = Number(process.env.BENCH_TRAFFIC_BURST ?? 1000);
const TRAFFIC_HIGH = Number(process.env.BENCH_TRAFFIC_HIGH ?? 20);
const TRAFFIC_HIGH_EVERY = Number(process.env.BENCH_TRAFFIC_HIGH_EVERY ?? 2);
const TRAFFIC_STEADY_SECONDS = Number(process.env.BENCH_TRAFFIC_STEADY_SECONDS ?? 30);
const TRAFFIC_CONTAINERS = (process.env.BENCH_TRAFFIC_CONTAINERS ?? '1,2,10').split(',').map(Number);
const TRAFFIC_FILE = path.join(LOCAL_DIR, 'bench-traffic.json');

async function trafficMain(): Promise<void> {
  // npm start's defaults (cdk.json: maxConcurrency 10, batching window 1 s), maxSendRate = the local SES's rate.
  const settings = loadLocalSettings({ maxSendRate: TRAFFIC_RATE });
  await Promise.all([checkJava(), ensureDynamoDbLocal()]);
  step('building bundles');
  const bundles = await buildBundles(path.join(BENCH_DIR, 'build'));
  step('starting emulators');
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS });
  try {
    const context = { endpoints: emulators.endpoints, bundles, settings };
    const rateUse = [];
    for (const consumers of TRAFFIC_CONTAINERS) {
      step(
        `traffic: rate use, ${TRAFFIC_RATE_EMAILS} emails, ${consumers} consumer(s), maxConcurrency ${settings.maxConcurrency}, local SES ${TRAFFIC_RATE}/s`,
      );
      rateUse.push(
        await section(`rate${consumers}`, bundles.consumer, () =>
          measureRateUse(context, consumers, TRAFFIC_RATE_EMAILS),
        ),
      );
    }
    step(
      `traffic: latency, steady ${TRAFFIC_STEADY_SECONDS} s, then a burst of ${TRAFFIC_BURST} with ${TRAFFIC_HIGH} high every ${TRAFFIC_HIGH_EVERY} s`,
    );
    const latency = await section('latency', bundles.consumer, () =>
      measureLatency(context, {
        steadySeconds: TRAFFIC_STEADY_SECONDS,
        burstEmails: TRAFFIC_BURST,
        highEmails: TRAFFIC_HIGH,
        highEverySeconds: TRAFFIC_HIGH_EVERY,
      }),
    );
    await writeReport(TRAFFIC_FILE, `npm run bench -- --only traffic`, {
      settings: {
        maxSendRate: settings.maxSendRate,
        maxConcurrency: settings.maxConcurrency,
        highPriorityRateShare: settings.highPriorityRateShare,
        batchSize: settings.batchSize,
        maxBatchingWindowSeconds: settings.maxBatchingWindowSeconds,
      },
      othersCpuShare: othersShare,
      runSeconds: Math.round((performance.now() - started) / 100) / 10,
      rateUse,
      latency,
    });
    console.log(formatTraffic(rateUse, latency));
    warnIfNoisy();
    console.log(`\nWrote ${path.relative(process.cwd(), TRAFFIC_FILE)}`);
  } finally {
    await emulators.stop();
  }
}

async function ledgerMain(): Promise<void> {
  const settings = loadLocalSettings({ maxBatchingWindowSeconds: 0, functionTimeoutSeconds: 5 });
  await Promise.all([checkJava(), ensureDynamoDbLocal()]);
  step('starting emulators');
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS });
  try {
    const stack = await createInProcessStack(emulators.endpoints, settings, `bench-ledger-${Date.now().toString(36)}`);
    step(ledgerStep());
    const ledger = await section('ledger', '', () => measureLedger(stack, LEDGER_OPTIONS));
    const cost = ledgerCostModel(ledgerCostInputs(ledger));
    await writeReport(LEDGER_FILE, 'npm run bench -- ledger', { othersCpuShare: othersShare, ledger, cost });
    console.log(formatLedger(ledger, cost));
    warnIfNoisy();
    console.log(`\nWrote ${path.relative(process.cwd(), LEDGER_FILE)}`);
  } finally {
    await emulators.stop();
  }
}

function cpuStep(): string {
  return `6: client CPU per record (${CPU_RUNS} fresh processes per variant, first ${CPU_FIRST_RECORDS}, then ${CPU_STEADY_RECORDS} after ${CPU_WARM_UP_RECORDS})`;
}

function clientCpu(
  endpoints: Pick<EmulatorEndpoints, 'dynamodb'>,
  settings: ResolvedSettings,
): Promise<ClientCpuResult> {
  const dynamodb = new DynamoDBClient(emulatorConfig(endpoints.dynamodb));
  return measureClientCpu({
    outDir: path.join(BENCH_DIR, 'cpu'),
    dynamodbEndpoint: endpoints.dynamodb,
    dynamodb,
    settings,
    runs: CPU_RUNS,
    firstRecords: CPU_FIRST_RECORDS,
    warmUpRecords: CPU_WARM_UP_RECORDS,
    steadyRecords: CPU_STEADY_RECORDS,
  }).finally(() => dynamodb.destroy());
}

/** Writes one mode's figures, with when, how and where they were produced, as JSON. */
async function writeReport(file: string, command: string, figures: Record<string, unknown>): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const report = { date: new Date().toISOString(), command, machine: machine(), ...figures };
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

const BUNDLE_FILE = path.join(LOCAL_DIR, 'bench-bundle.json');

async function bundleMain(): Promise<void> {
  const settings = dedupeBenchSettings();
  step('building bundles; 4: init time');
  const bundles = await buildBundles(path.join(BENCH_DIR, 'build'));
  const bundle = await section('bundle', bundles.consumer, () =>
    measureBundle({ outDir: BENCH_DIR, bundles, settings, runs: INIT_RUNS }),
  );
  await writeReport(BUNDLE_FILE, 'npm run bench -- bundle', { othersCpuShare: othersShare, bundle });
  console.log(formatBundle(bundle));
  warnIfNoisy();
  console.log(`\nWrote ${path.relative(process.cwd(), BUNDLE_FILE)}`);
}

async function cpuMain(): Promise<void> {
  const settings = dedupeBenchSettings();
  await Promise.all([checkJava(), ensureDynamoDbLocal()]);
  step('starting DynamoDB Local');
  const dynamodb = await startDynamoDbLocal();
  try {
    step(cpuStep());
    const cpu = await section('clientCpu', '', () => clientCpu({ dynamodb: dynamodb.endpoint }, settings));
    await writeReport(CPU_FILE, 'npm run bench -- cpu', { othersCpuShare: othersShare, clientCpu: cpu });
    console.log(formatClientCpu(cpu));
    warnIfNoisy();
    console.log(`\nWrote ${path.relative(process.cwd(), CPU_FILE)}`);
  } finally {
    await dynamodb.stop();
  }
}

function ledgerStep(): string {
  return `5b: ledger (${LEDGER_EMAILS_PER_ROUND} emails x Send + Delivery per round, warm-up + ${LEDGER_ROUNDS} rounds, batches of ${LEDGER_FUNCTIONS.batchSize})`;
}

function warnIfNoisy(): void {
  const noisy = Object.entries(othersShare).filter(([, share]) => share > 0.1);
  if (noisy.length > 0) {
    const list = noisy.map(([name, share]) => `${name} ${Math.round(share * 100)}%`).join(', ');
    console.log(`\nWARNING: other processes on this machine took CPU during: ${list}. Rerun on a quiet machine.`);
  }
}

const USAGE = `Usage: npm run bench              dedupe on vs off: throughput, DynamoDB requests, batch latency, init, cost
       npm run bench -- pacing    send pacing against a rate-limited local SES
       npm run bench -- --only traffic   rate use with 1, 2 and maxConcurrency containers; latency per lane
       npm run bench -- ledger    the send ledger's own requests, batch time and cost
       npm run bench -- bundle    handler bundle size and require() time only
       npm run bench -- cpu       client CPU per record: handler vs the hand-signed floor

Writes .local/bench.json, .local/bench-pacing.json, .local/bench-ledger.json, .local/bench-bundle.json or .local/bench-cpu.json and prints a table (see BENCHMARKS.md).`;

async function bench(mode: string | undefined): Promise<void> {
  if (mode === '--help' || mode === '-h') {
    console.log(USAGE);
    return;
  }
  if (mode === 'pacing') return pacingMain();
  if (mode === 'traffic') return trafficMain();
  if (mode === 'ledger') return ledgerMain();
  if (mode === 'cpu') return cpuMain();
  if (mode === 'bundle') return bundleMain();
  if (mode !== undefined)
    throw new Error(`unknown benchmark "${mode}" (known: pacing, traffic, ledger, cpu, bundle)\n\n${USAGE}`);
  const settings = dedupeBenchSettings();
  await Promise.all([checkJava(), ensureDynamoDbLocal()]);

  step('building bundles; 4: init time (before the emulators start, on an idle machine)');
  const bundles = await buildBundles(path.join(BENCH_DIR, 'build'));
  const bundle = await section('bundle', bundles.consumer, () =>
    measureBundle({ outDir: BENCH_DIR, bundles, settings, runs: INIT_RUNS }),
  );

  step('starting emulators');
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS });
  let result: Omit<BenchResult, 'runSeconds' | 'cost' | 'othersCpuShare'>;
  try {
    const stack = await createInProcessStack(emulators.endpoints, settings, `bench-inproc-${Date.now().toString(36)}`);
    step(
      `2: DynamoDB requests (${DYNAMODB_MESSAGES} unique, ${DYNAMODB_MESSAGES} duplicates, ${DYNAMODB_MESSAGES / 2} in-batch pairs)`,
    );
    const dynamodbRequests = await section('dynamodbRequests', bundles.consumer, () =>
      measureDynamoDbRequests(stack, DYNAMODB_MESSAGES),
    );
    step(`3: batch latency (SES ${SES_LATENCY_MS} ms, ${BATCH_REPETITIONS} repetitions)`);
    const batchLatency = await section('batchLatency', bundles.consumer, () =>
      measureBatchLatency(stack, { sesLatencyMs: SES_LATENCY_MS, repetitions: BATCH_REPETITIONS }),
    );
    step(ledgerStep());
    const ledger = await section('ledger', bundles.consumer, () => measureLedger(stack, LEDGER_OPTIONS));
    step(cpuStep());
    const clientCpuResult = await section('clientCpu', bundles.consumer, () =>
      clientCpu(emulators.endpoints, settings),
    );
    step(`5c: the rate lease's writes per email (${LEASE_EMAILS} emails, 1 container, npm start's defaults)`);
    const lease = await section('lease', bundles.consumer, () =>
      measureRateUse(
        { endpoints: emulators.endpoints, bundles, settings: loadLocalSettings({ maxSendRate: TRAFFIC_RATE }) },
        1,
        LEASE_EMAILS,
      ),
    );
    step(
      `1: throughput (${THROUGHPUT_MESSAGES} messages, ${CONSUMERS} consumers, warm-up + ${THROUGHPUT_ROUNDS * 2} runs)`,
    );
    const throughput = await section('throughput', bundles.consumer, () =>
      measureThroughput({
        endpoints: emulators.endpoints,
        bundles,
        settings,
        messages: THROUGHPUT_MESSAGES,
        consumers: CONSUMERS,
        rounds: THROUGHPUT_ROUNDS,
      }),
    );
    result = {
      date: new Date().toISOString(),
      command: QUICK ? 'npm run bench -- --quick' : 'npm run bench',
      machine: machine(),
      throughput,
      dynamodbRequests,
      batchLatency,
      bundle,
      ledger,
      clientCpu: clientCpuResult,
      lease,
    };
  } finally {
    await emulators.stop();
  }

  const { unique, duplicate } = result.dynamodbRequests;
  const writes = (p: typeof unique) => p.perMessage.PutItem + p.perMessage.UpdateItem + p.perMessage.DeleteItem;
  const cost = costModel({
    batchSize: settings.batchSize,
    memoryMb: settings.memorySizeMb,
    batchMsOn: result.batchLatency.parallelMs,
    batchMsOff: result.batchLatency.parallelNoDedupeMs,
    // Records are far below 1 KB (largestItemBytes): one unit per request.
    writesPerUnique: writes(unique),
    readsPerUnique: unique.perMessage.GetItem,
    writesPerDuplicate: writes(duplicate),
    readsPerDuplicate: duplicate.perMessage.GetItem,
    // The mapping: one ReceiveMessage and one DeleteMessageBatch per batch, plus retries' visibility changes.
    sqsRequestsPerMessage: 2 / settings.batchSize + result.throughput.visibilityChangesPerMessage,
    ledger: ledgerCostInputs(result.ledger),
    leaseWritesPerEmail: result.lease.leaseWritesPerEmail,
  });
  const full: BenchResult = {
    ...result,
    cost,
    othersCpuShare: othersShare,
    runSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  await mkdir(path.dirname(RESULT_FILE), { recursive: true });
  await writeFile(RESULT_FILE, `${JSON.stringify(full, null, 2)}\n`);
  console.log(formatTable(full));
  console.log(
    `\ncost.totalOverheadShareOfSes ${full.cost.totalOverheadShareOfSes} (dedupe ${full.cost.dedupeOverhead}, ledger ${full.cost.ledger?.subtotal ?? 0}, rate lease ${full.cost.rateLease ?? 0} USD per million emails)`,
  );
  warnIfNoisy();
  console.log(`\nWrote ${path.relative(process.cwd(), RESULT_FILE)}`);
}

/** Runs the benchmark named by the first argument (none: the dedupe benchmark) and exits. */
export function main(given: readonly string[] = process.argv.slice(2)): Promise<void> {
  const args = given.filter((arg) => arg !== '--quick');
  // `--only NAME` is the same as `NAME`.
  return bench(args[0] === '--only' ? args[1] : args[0]).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
