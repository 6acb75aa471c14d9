/**
 * Item 6: client CPU per record. Fresh `node` processes each load one bundle (built with the
 * deployed esbuild options, run with --enable-source-maps as deployed) and invoke it with
 * batches of 10 records against DynamoDB Local, one batch after another, the records of a batch
 * in parallel. Each process reports its own process.cpuUsage() (user + system) per record over
 * its first records (a new container) and over a steady-state window after a warm-up. Variants:
 *   - handler:   the send-email handler (client-cpu/handler-entry.ts), dedupe on;
 *   - dedupeOff: the same bundle with POWERTOOLS_IDEMPOTENCY_DISABLED=true;
 *   - floor:     the same two DynamoDB requests per record, hand-signed (client-cpu/floor-entry.ts).
 * Runs alternate between the variants; each figure is the median over the runs.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { CreateTableCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { build } from 'esbuild';
import type { ResolvedSettings } from '../../../lib/settings';
import { handlerEnvironment, IDEMPOTENCY_TABLE } from '../../../lib/construct/handler-env';
import { lambdaBuildOptions } from '../../build/lambda-bundle';
import { LOCAL_AWS_ENV } from '../local/emulator-config';
import { queueRecord, snsEnvelope } from '../local/records';
import { benchEmail } from './in-process';
import { median, round } from './stats';

const execFileAsync = promisify(execFile);

export const CPU_VARIANTS = ['handler', 'dedupeOff', 'floor'] as const;
export type CpuVariant = (typeof CPU_VARIANTS)[number];

/** Runs in the child: require the bundle, read the records, invoke batch after batch, print CPU ms. */
const CHILD = `const { readFileSync } = require('node:fs');
const [bundle, recordsFile, firstArg, warmArg] = process.argv.slice(1);
const first = Number(firstArg), warm = Number(warmArg);
const { handler } = require(bundle);
const records = JSON.parse(readFileSync(recordsFile, 'utf8'));
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const systemMs = () => process.cpuUsage().system / 1000;
const context = () => {
  const deadline = Date.now() + 30000;
  return { functionName: 'bench', awsRequestId: String(deadline), memoryLimitInMB: '256',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench', functionVersion: '$LATEST',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
};
async function run(from, to) {
  for (let i = from; i < to; i += 10) {
    const response = await handler({ Records: records.slice(i, Math.min(i + 10, to)) }, context());
    if (response.batchItemFailures.length > 0) throw new Error(response.batchItemFailures.length + ' record(s) failed');
  }
}
(async () => {
  const t0 = cpuMs();
  await run(0, first);
  const t1 = cpuMs();
  await run(first, warm);
  const t2 = cpuMs(), s2 = systemMs();
  await run(warm, records.length);
  const t3 = cpuMs(), s3 = systemMs();
  process.stdout.write(JSON.stringify({ firstMs: t1 - t0, steadyMs: t3 - t2, steadySystemMs: s3 - s2 }));
})().catch((error) => { console.error(error); process.exit(1); });`;

export interface ClientCpuFigures {
  /** CPU ms per record over the first records of a fresh process (module load not included). */
  readonly firstMsPerRecord: number;
  /** CPU ms per record over the steady-state window. */
  readonly steadyMsPerRecord: number;
}

/** A variant's figures, with the kernel's share of the steady state (system CPU: the socket writes and reads). */
export interface ClientCpuVariantFigures extends ClientCpuFigures {
  /** System (kernel) CPU ms per record over the steady-state window, included in steadyMsPerRecord. */
  readonly steadySystemMsPerRecord: number;
}

export interface ClientCpuResult {
  readonly runsPerVariant: number;
  readonly firstRecords: number;
  /** Records before the steady-state window starts. */
  readonly warmUpRecords: number;
  readonly steadyRecords: number;
  readonly perVariant: Readonly<Record<CpuVariant, ClientCpuVariantFigures>>;
  /** handler / floor, from the medians. */
  readonly ratioToFloor: ClientCpuFigures;
  /** Items the handler's runs left in the table, all COMPLETED: one per record. */
  readonly completedItemsPerRecord: number;
}

export interface ClientCpuOptions {
  readonly outDir: string;
  readonly dynamodbEndpoint: string;
  readonly dynamodb: DynamoDBClient;
  readonly settings: ResolvedSettings;
  readonly runs: number;
  readonly firstRecords: number;
  readonly warmUpRecords: number;
  readonly steadyRecords: number;
}

async function bundles(outDir: string): Promise<Record<'handler' | 'floor', string>> {
  const out = { handler: path.join(outDir, 'handler', 'index.js'), floor: path.join(outDir, 'floor', 'index.js') };
  await Promise.all([
    build(lambdaBuildOptions(path.join(__dirname, 'client-cpu', 'handler-entry.ts'), out.handler)),
    build(lambdaBuildOptions(path.join(__dirname, 'client-cpu', 'floor-entry.ts'), out.floor)),
  ]);
  return out;
}

async function writeRecords(file: string, run: string, count: number, topicArn: string, queueArn: string) {
  const records = Array.from({ length: count }, (_, i) =>
    queueRecord(JSON.stringify(snsEnvelope(benchEmail(i), { messageId: `${run}-${i}`, topicArn })), queueArn),
  );
  await writeFile(file, JSON.stringify(records));
}

async function completedItems(dynamodb: DynamoDBClient, tableName: string): Promise<number> {
  let count = 0;
  let start: Record<string, never> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#s = :done',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':done': { S: 'COMPLETED' } },
        Select: 'COUNT',
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  return count;
}

export async function measureClientCpu(options: ClientCpuOptions): Promise<ClientCpuResult> {
  await mkdir(options.outDir, { recursive: true });
  const bundle = await bundles(options.outDir);
  const stamp = Date.now().toString(36);
  // One table for the handler runs (their items are counted), one for the others.
  const tables = { handler: `bench-cpu-${stamp}`, other: `bench-cpu-${stamp}-other` };
  for (const tableName of Object.values(tables)) {
    await options.dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  }
  const topicArn = 'arn:aws:sns:us-east-1:000000000000:bench-cpu-topic';
  const queueArn = 'arn:aws:sqs:us-east-1:000000000000:bench-cpu-queue';
  const total = options.warmUpRecords + options.steadyRecords;
  const environment = (variant: CpuVariant): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    ...LOCAL_AWS_ENV,
    ...handlerEnvironment(options.settings, {
      topicArn,
      tableName: variant === 'handler' ? tables.handler : tables.other,
      sourceQueueUrl: 'http://127.0.0.1:9/000000000000/bench-cpu-queue',
      scheduleQueueUrl: 'http://127.0.0.1:9/000000000000/bench-cpu-schedule',
      deadLetterQueueUrl: 'http://127.0.0.1:9/000000000000/bench-cpu-dlq',
      // Not created: a ledger read on the normal path would fail the record, and the run.
      ledgerTableName: `bench-cpu-${stamp}-ledger`,
    }),
    AWS_ENDPOINT_URL_DYNAMODB: options.dynamodbEndpoint,
    // As the in-process benchmark: no log lines, no EMF output; the dedupe path is measured.
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...(variant === 'dedupeOff' ? { POWERTOOLS_IDEMPOTENCY_DISABLED: 'true' } : {}),
  });
  const samples = new Map<CpuVariant, { firstMs: number; steadyMs: number; steadySystemMs: number }[]>(
    CPU_VARIANTS.map((v) => [v, []]),
  );
  for (let run = 0; run < options.runs; run += 1) {
    for (let i = 0; i < CPU_VARIANTS.length; i += 1) {
      const variant = CPU_VARIANTS[(run + i) % CPU_VARIANTS.length] as CpuVariant;
      const file = path.join(options.outDir, `records-${variant}-${run}.json`);
      await writeRecords(file, `${stamp}-${variant}-${run}`, total, topicArn, queueArn);
      // BENCH_CPU_PROFILE=<dir>: each child also writes a V8 CPU profile there (to see where the time goes).
      const profile = process.env.BENCH_CPU_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
        : [];
      const args = [
        ...profile,
        '--enable-source-maps',
        '-e',
        CHILD,
        bundle[variant === 'floor' ? 'floor' : 'handler'],
        file,
      ];
      const { stdout } = await execFileAsync(
        process.execPath,
        [...args, String(options.firstRecords), String(options.warmUpRecords)],
        { env: environment(variant), timeout: 600_000, maxBuffer: 1 << 20 },
      );
      samples.get(variant)?.push(JSON.parse(stdout) as { firstMs: number; steadyMs: number; steadySystemMs: number });
    }
  }
  const figures = (variant: CpuVariant): ClientCpuVariantFigures => {
    const list = samples.get(variant) ?? [];
    return {
      firstMsPerRecord: round(median(list.map((s) => s.firstMs)) / options.firstRecords, 3),
      steadyMsPerRecord: round(median(list.map((s) => s.steadyMs)) / options.steadyRecords, 3),
      steadySystemMsPerRecord: round(median(list.map((s) => s.steadySystemMs)) / options.steadyRecords, 3),
    };
  };
  const perVariant = Object.fromEntries(CPU_VARIANTS.map((v) => [v, figures(v)])) as Record<
    CpuVariant,
    ClientCpuVariantFigures
  >;
  const completed = await completedItems(options.dynamodb, tables.handler);
  return {
    runsPerVariant: options.runs,
    firstRecords: options.firstRecords,
    warmUpRecords: options.warmUpRecords,
    steadyRecords: options.steadyRecords,
    perVariant,
    ratioToFloor: {
      firstMsPerRecord: round(perVariant.handler.firstMsPerRecord / perVariant.floor.firstMsPerRecord, 1),
      steadyMsPerRecord: round(perVariant.handler.steadyMsPerRecord / perVariant.floor.steadyMsPerRecord, 1),
    },
    completedItemsPerRecord: round(completed / (total * options.runs), 3),
  };
}
