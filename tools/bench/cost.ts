/**
 * Item 5: cost per million emails at AWS list prices (us-east-1), from the measured request
 * counts and handler durations. Pure arithmetic: every input is passed in.
 */
import { round } from './stats';

/** Public list prices, us-east-1, USD, as recorded on PRICES_RECORDED_ON (see BENCHMARKS.md). */
export const PRICES = {
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerRequest: 0.2 / 1e6,
  sqsPerRequest: 0.4 / 1e6,
  snsPerPublish: 0.5 / 1e6,
  dynamoDbPerWriteUnit: 0.625 / 1e6,
  dynamoDbPerReadUnit: 0.125 / 1e6,
  sesPerEmail: 0.1 / 1000,
} as const;
export const PRICES_RECORDED_ON = '2026-11-29';

export interface CostInputs {
  readonly batchSize: number;
  readonly memoryMb: number;
  /** Handler wall-clock per full batch, dedupe on and off, ms. */
  readonly batchMsOn: number;
  readonly batchMsOff: number;
  /** DynamoDB write and read request units per unique email and per duplicate. */
  readonly writesPerUnique: number;
  readonly readsPerUnique: number;
  readonly writesPerDuplicate: number;
  readonly readsPerDuplicate: number;
  /** SQS requests per message: receive + delete per batch, plus visibility changes. */
  readonly sqsRequestsPerMessage: number;
}

export interface CostLine {
  readonly item: string;
  readonly usd: number;
}

export interface CostResult {
  readonly inputs: CostInputs;
  readonly pricesRecordedOn: string;
  /** Per million unique emails, dedupe on. */
  readonly lines: readonly CostLine[];
  readonly totalOn: number;
  readonly totalOff: number;
  /** DynamoDB + the Lambda time the dedupe adds, per million emails. */
  readonly dedupeOverhead: number;
  /** dedupeOverhead / SES cost. */
  readonly overheadShareOfSes: number;
  /** What a million duplicates cost to suppress (DynamoDB only) vs what sending them would cost in SES. */
  readonly perMillionDuplicates: { readonly suppress: number; readonly sesIfSent: number };
}

export function costModel(inputs: CostInputs): CostResult {
  const emails = 1e6;
  const invocations = emails / inputs.batchSize;
  const gbSeconds = (ms: number) => invocations * (ms / 1000) * (inputs.memoryMb / 1024);
  const lambdaTime = (ms: number) => gbSeconds(ms) * PRICES.lambdaArmPerGbSecond;
  const ddb =
    emails *
    (inputs.writesPerUnique * PRICES.dynamoDbPerWriteUnit + inputs.readsPerUnique * PRICES.dynamoDbPerReadUnit);
  const ses = emails * PRICES.sesPerEmail;
  const lines: CostLine[] = [
    { item: 'SES SendEmail', usd: ses },
    { item: 'SNS Publish', usd: emails * PRICES.snsPerPublish },
    { item: 'SQS requests', usd: emails * inputs.sqsRequestsPerMessage * PRICES.sqsPerRequest },
    { item: 'Lambda requests', usd: invocations * PRICES.lambdaPerRequest },
    { item: 'Lambda duration', usd: lambdaTime(inputs.batchMsOn) },
    { item: 'DynamoDB (idempotency)', usd: ddb },
  ];
  const totalOn = lines.reduce((sum, line) => sum + line.usd, 0);
  const totalOff = totalOn - ddb - lambdaTime(inputs.batchMsOn) + lambdaTime(inputs.batchMsOff);
  const dedupeOverhead = ddb + lambdaTime(inputs.batchMsOn) - lambdaTime(inputs.batchMsOff);
  const money = (x: number) => round(x, 4);
  return {
    inputs,
    pricesRecordedOn: PRICES_RECORDED_ON,
    lines: lines.map((line) => ({ item: line.item, usd: money(line.usd) })),
    totalOn: money(totalOn),
    totalOff: money(totalOff),
    dedupeOverhead: money(dedupeOverhead),
    overheadShareOfSes: round(dedupeOverhead / ses, 4),
    perMillionDuplicates: {
      suppress: money(
        emails *
          (inputs.writesPerDuplicate * PRICES.dynamoDbPerWriteUnit +
            inputs.readsPerDuplicate * PRICES.dynamoDbPerReadUnit),
      ),
      sesIfSent: money(ses),
    },
  };
}
