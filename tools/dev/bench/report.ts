/** The benchmark's result as JSON, and the compact table printed from the same figures. */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import type { BatchLatencyResult } from './batch-latency';
import type { BundleResult } from './bundle';
import type { CostResult, LedgerCostResult } from './cost';
import type { CountedCommand, DynamoDbRequestsResult } from './dynamodb-requests';
import type { ClientCpuFigures, ClientCpuResult } from './client-cpu';
import type { LedgerBenchResult } from './ledger';
import type { ThroughputResult } from './throughput';
import type { RateUseResult } from './traffic';

export interface Machine {
  readonly nproc: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly uname: string;
}

export interface BenchResult {
  readonly date: string;
  readonly command: string;
  readonly machine: Machine;
  /** Per measurement: share of all cores that processes outside this benchmark used meanwhile. */
  readonly othersCpuShare: Readonly<Record<string, number>>;
  /** Wall-clock of the whole run, emulator start and stop included, seconds. */
  readonly runSeconds: number;
  readonly throughput: ThroughputResult;
  readonly dynamodbRequests: DynamoDbRequestsResult;
  readonly batchLatency: BatchLatencyResult;
  readonly bundle: BundleResult;
  readonly ledger: LedgerBenchResult;
  readonly clientCpu: ClientCpuResult;
  /** 5c: a burst through one container at npm start's defaults, for the rate lease's writes per email. */
  readonly lease: RateUseResult;
  readonly cost: CostResult;
}

export function machine(): Machine {
  let uname = 'unknown';
  try {
    uname = execFileSync('uname', ['-a'], { encoding: 'utf8' }).trim();
  } catch {
    /* not on a Unix */
  }
  return {
    nproc: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    uname,
  };
}

type Row = readonly [section: string, metric: string, value: string];

const usd = (x: number) => `$${x.toFixed(4)}`;

/** 5b: the ledger's measured figures and its cost per million emails. */
function ledgerRows(l: LedgerBenchResult, c: LedgerCostResult): Row[] {
  const p = l.inOrder;
  const units = (x: number | null) => (x === null ? 'not reported' : String(x));
  const puts = (c: Readonly<Record<CountedCommand, number>>) =>
    `Put ${c.PutItem} / Update ${c.UpdateItem} / Get ${c.GetItem} / BatchGet ${c.BatchGetItem}`;
  return [
    [
      '5b ledger',
      'lifecycle per email (SES events through the default event bus)',
      `${l.lifecycle.join(' + ')} (${l.eventsPerEmail})`,
    ],
    [
      '5b ledger',
      `DynamoDB per email, in order (n=${p.emails})`,
      `${puts(p.dynamodb.perMessage)}; attempts ${p.dynamodb.attemptsPerMessage}`,
    ],
    [
      '5b ledger',
      'capacity units per email (DynamoDB Local), write / read',
      `${units(p.writeUnitsPerEmail)} / ${units(p.readUnitsPerEmail)} (${p.capacityReported.reported} of ${p.capacityReported.asked} answers)`,
    ],
    ['5b ledger', 'delivery-status publishes per email', String(p.statusPublishesPerEmail)],
    [
      '5b ledger',
      `batch of ${l.batchSize}, ms (median of ${p.samples.length}); by event`,
      `${p.batchMs}; ${Object.entries(p.batchMsByType)
        .map(([type, ms]) => `${type} ${ms}`)
        .join(', ')}`,
    ],
    ['5b ledger', 'handler CPU ms/batch (median)', String(p.cpuMsPerBatch)],
    ['5b ledger', 'SQS requests per event (receive + delete per batch)', String(l.sqsRequestsPerEvent)],
    [
      '5b ledger',
      `same batch: DynamoDB / status publishes per email (n=${l.sameBatch.emails})`,
      `${puts(l.sameBatch.dynamodb.perMessage)}; ${l.sameBatch.statusPublishesPerEmail}`,
    ],
    ['5b ledger', 'largest ledger item', `${l.largestItemBytes} B`],
    ...c.lines.map((line): Row => ['5b cost/1M', line.item, usd(line.usd)]),
    ['5b cost/1M', 'ledger subtotal (share of SES)', `${usd(c.subtotal)} (${(c.shareOfSes * 100).toFixed(2)}%)`],
  ];
}

function bundleRows(b: BundleResult): Row[] {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  return [
    ['4 bundle', 'handler min / gzip', `${kb(b.handler.bytes)} / ${kb(b.handler.gzipBytes)}`],
    ['4 bundle', 'bare min / gzip', `${b.bare.bytes} B / ${b.bare.gzipBytes} B`],
    ['4 bundle', 'the libraries alone, min / gzip', `${kb(b.libraries.bytes)} / ${kb(b.libraries.gzipBytes)}`],
    ['4 init', `require() ms, handler (source maps on) (n=${b.runsPerVariant})`, String(b.handlerInit.requireMs)],
    ['4 init', 'require() ms, handler (source maps off)', String(b.handlerInitNoSourceMaps.requireMs)],
    ['4 init', 'require() ms, bare', String(b.bareInit.requireMs)],
    ['4 init', 'require() ms, the libraries alone', String(b.librariesInit.requireMs)],
    ['4 init', 'handler - bare, ms / ratio', `${b.initExtraMs} / ${b.initRatio}`],
    ['4 init', 'node process ms, handler / bare', `${b.handlerInit.processMs} / ${b.bareInit.processMs}`],
  ];
}

function clientCpuRows(r: ClientCpuResult): Row[] {
  const both = (f: ClientCpuFigures) => `${f.firstMsPerRecord} / ${f.steadyMsPerRecord}`;
  const window = `first ${r.firstRecords} / ${r.steadyRecords} after ${r.warmUpRecords}`;
  return [
    ['6 client CPU', `ms/record, handler, ${window} (median of ${r.runsPerVariant})`, both(r.perVariant.handler)],
    ['6 client CPU', 'ms/record, handler with dedupe off', both(r.perVariant.dedupeOff)],
    ['6 client CPU', 'ms/record, floor (the 2 requests, hand-signed)', both(r.perVariant.floor)],
    ['6 client CPU', 'handler / floor', `${r.ratioToFloor.firstMsPerRecord} / ${r.ratioToFloor.steadyMsPerRecord}`],
    [
      '6 client CPU',
      'of the steady ms/record, kernel (system): handler / floor',
      `${r.perVariant.handler.steadySystemMsPerRecord} / ${r.perVariant.floor.steadySystemMsPerRecord}`,
    ],
    ['6 client CPU', 'completed idempotency items per handler record', String(r.completedItemsPerRecord)],
  ];
}

function rows(r: BenchResult): Row[] {
  const t = r.throughput;
  const d = r.dynamodbRequests;
  const l = r.batchLatency;
  const b = r.bundle;
  const c = r.cost;
  const per = (p: DynamoDbRequestsResult['unique']) =>
    `Put ${p.perMessage.PutItem} / Update ${p.perMessage.UpdateItem} / Get ${p.perMessage.GetItem} / Delete ${p.perMessage.DeleteItem}`;
  return [
    [
      '1 throughput',
      `dedupe on, msg/s (median of ${t.runs.filter((x) => x.variant === 'on').length})`,
      String(t.medianOn),
    ],
    [
      '1 throughput',
      `dedupe off, msg/s (median of ${t.runs.filter((x) => x.variant === 'off').length})`,
      String(t.medianOff),
    ],
    ['1 throughput', 'on / off: of the medians; median per round', `${t.onOverOff}; ${t.medianPairRatio}`],
    ['1 throughput', 'on / off per round', t.pairRatios.join(' ')],
    ['1 throughput', 'runs (variant: msg/s)', t.runs.map((x) => `${x.variant}:${x.messagesPerSecond}`).join(' ')],
    [
      '1 throughput',
      'CPU share taken by other processes, per run',
      t.runs.map((x) => `${Math.round((x.cpu?.othersBusyShare ?? 0) * 100)}%`).join(' '),
    ],
    ...(t.cpu
      ? (['on', 'off'] as const).map((v): Row => {
          const cpu = t.cpu?.[v];
          const total = cpu ? Object.values(cpu.msPerMessage).reduce((sum, x) => sum + x, 0) : 0;
          return [
            '1 throughput',
            `CPU ms/msg, dedupe ${v} (machine busy)`,
            `${total.toFixed(2)} total, DynamoDB Local ${cpu?.msPerMessage.dynamodbLocal ?? 0}, consumers ${cpu?.msPerMessage.consumers ?? 0} (${Math.round((cpu?.machineBusyShare ?? 0) * 100)}%)`,
          ];
        })
      : []),
    ['2 dynamodb', `per unique (n=${d.unique.messages})`, per(d.unique)],
    ['2 dynamodb', `per duplicate (n=${d.duplicate.messages})`, per(d.duplicate)],
    ['2 dynamodb', `per pair in one batch (n=${d.sameBatchPair.messages})`, per(d.sameBatchPair)],
    [
      '2 dynamodb',
      'attempts per unique / duplicate',
      `${d.unique.attemptsPerMessage} / ${d.duplicate.attemptsPerMessage}`,
    ],
    [
      '2 dynamodb',
      'duplicates that got the old item back',
      `${d.duplicate.oldItemReturned} of ${d.duplicate.messages}`,
    ],
    [
      '2 dynamodb',
      'emails sent (unique / duplicate / pair phase)',
      `${d.unique.emailsSent} / ${d.duplicate.emailsSent} / ${d.sameBatchPair.emailsSent}`,
    ],
    ['2 dynamodb', 'largest record', `${d.largestItemBytes} B`],
    ['3 batch', `parallel, ms (SES ${l.sesLatencyMs} ms, ${l.batchSize} records)`, String(l.parallelMs)],
    ['3 batch', 'sequential, ms', String(l.sequentialMs)],
    ['3 batch', 'sequential / parallel', String(l.sequentialOverParallel)],
    ['3 batch', 'parallel, dedupe off, ms', String(l.parallelNoDedupeMs)],
    [
      '3 batch',
      'handler CPU ms/batch, dedupe on / off',
      `${l.cpuMsPerBatch.parallel} / ${l.cpuMsPerBatch.parallelNoDedupe}`,
    ],
    ...bundleRows(b),
    ...clientCpuRows(r.clientCpu),
    ...c.lines.map((line): Row => ['5 cost/1M', line.item, usd(line.usd)]),
    ['5 cost/1M', 'total, dedupe on / off', `${usd(c.totalOn)} / ${usd(c.totalOff)}`],
    [
      '5 cost/1M',
      'dedupe overhead (share of SES)',
      `${usd(c.dedupeOverhead)} (${(c.overheadShareOfSes * 100).toFixed(2)}%)`,
    ],
    [
      '5 cost/1M',
      '1M duplicates: suppress / SES if sent',
      `${usd(c.perMillionDuplicates.suppress)} / ${usd(c.perMillionDuplicates.sesIfSent)}`,
    ],
    ...(c.ledger ? ledgerRows(r.ledger, c.ledger) : []),
    ...(c.totalWithLedger !== undefined
      ? [['5b cost/1M', 'total with the ledger (dedupe on)', usd(c.totalWithLedger)] as Row]
      : []),
    ...(c.rateLease !== undefined
      ? [
          [
            '5c lease',
            'rate lease writes per email (1 container, npm start defaults)',
            String(c.inputs.leaseWritesPerEmail),
          ] as Row,
          ['5c cost/1M', 'rate lease (DynamoDB)', usd(c.rateLease)] as Row,
        ]
      : []),
    [
      'cost',
      'totalOverheadShareOfSes: dedupe + ledger + lease',
      `${(c.totalOverheadShareOfSes * 100).toFixed(2)}% (${usd(c.dedupeOverhead)} + ${usd(c.ledger?.subtotal ?? 0)} + ${usd(c.rateLease ?? 0)} = ${usd(c.totalOverhead)} of SES's ${usd(c.perMillionDuplicates.sesIfSent)})`,
    ],
    ...(c.totalOverheadShareIfEventsBilled !== undefined
      ? [
          [
            'cost',
            'the same if EventBridge billed SES events ($1/M)',
            `${(c.totalOverheadShareIfEventsBilled * 100).toFixed(2)}%`,
          ] as Row,
        ]
      : []),
    [
      '',
      'CPU share taken by other processes',
      Object.entries(r.othersCpuShare)
        .map(([name, share]) => `${name} ${Math.round(share * 100)}%`)
        .join(', '),
    ],
    ['', 'run time, s', String(r.runSeconds)],
  ];
}

function format(all: readonly Row[]): string {
  const w0 = Math.max(...all.map((r) => r[0].length));
  const w1 = Math.max(...all.map((r) => r[1].length));
  return all.map(([s, m, v]) => `${s.padEnd(w0)}  ${m.padEnd(w1)}  ${v}`).join('\n');
}

export function formatTable(result: BenchResult): string {
  return format(rows(result));
}

/** The table of `npm run bench -- bundle`. */
export function formatBundle(result: BundleResult): string {
  return format(bundleRows(result));
}

/** The table of `npm run bench -- cpu`. */
export function formatClientCpu(result: ClientCpuResult): string {
  return format(clientCpuRows(result));
}

/** The table of `npm run bench -- ledger`. */
export function formatLedger(ledger: LedgerBenchResult, cost: LedgerCostResult): string {
  return format(ledgerRows(ledger, cost));
}
