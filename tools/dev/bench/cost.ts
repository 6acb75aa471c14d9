/**
 * Item 5: cost per million emails at AWS list prices (us-east-1), from the measured request
 * counts and handler durations, and (5b) the send ledger's own cost on top. Pure arithmetic:
 * every input is passed in.
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
  /**
   * SES's events on the default event bus: AWS service events are ingested and delivered to
   * same-account targets free (https://aws.amazon.com/eventbridge/pricing/ names "AWS management
   * events" free and "AWS opt-in data events" apart; SES's email events come only after a
   * configuration set opts in, so {@link EVENTBRIDGE_IF_BILLED} is shown beside).
   */
  eventBridgePerSesEvent: 0,
} as const;
/** What SES's events would cost if EventBridge billed them as opt-in data events (custom-event price). */
export const EVENTBRIDGE_IF_BILLED = 1.0 / 1e6;
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
  /** The send ledger's inputs; none: the result has no ledger section. */
  readonly ledger?: LedgerCostInputs;
  /** Writes to the shared rate lease per email (one container at npm start's defaults); none: not measured. */
  readonly leaseWritesPerEmail?: number;
}

/** The send ledger's measured figures: SES events -> default event bus -> rule -> buffer queue -> ledger function. */
export interface LedgerCostInputs {
  /** The ledger function's event source batch size and memory. */
  readonly batchSize: number;
  readonly memoryMb: number;
  /** Ledger handler wall-clock per full batch, ms. */
  readonly batchMs: number;
  /** SES events per email: each one an event on the default bus and a buffer-queue message. */
  readonly eventsPerEmail: number;
  /** SQS requests per event: receive + delete per batch. */
  readonly sqsRequestsPerEvent: number;
  /** DynamoDB write and read request units per email (all of its events). */
  readonly writeUnitsPerEmail: number;
  readonly readUnitsPerEmail: number;
  /** Publishes to the delivery-status topic per email (one per status change). */
  readonly statusPublishesPerEmail: number;
}

export interface LedgerCostResult {
  readonly inputs: LedgerCostInputs;
  /** Per million emails. */
  readonly lines: readonly CostLine[];
  readonly subtotal: number;
  /** subtotal / SES cost. */
  readonly shareOfSes: number;
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
  /** The ledger's own cost, when its inputs were given. */
  readonly ledger?: LedgerCostResult;
  /** totalOn plus the ledger subtotal, when its inputs were given. */
  readonly totalWithLedger?: number;
  /** The rate lease's writes per million emails, when measured. */
  readonly rateLease?: number;
  /** Everything the pipeline adds to SES: dedupe, the ledger and the rate lease, per million emails. */
  readonly totalOverhead: number;
  /** totalOverhead / SES cost (0.03 is 3 %). */
  readonly totalOverheadShareOfSes: number;
  /** The same share if EventBridge billed SES's events ({@link EVENTBRIDGE_IF_BILLED} each). */
  readonly totalOverheadShareIfEventsBilled?: number;
}

const EMAILS = 1e6;
const money = (x: number) => round(x, 4);

/** Lambda duration cost of `invocations` of `ms` each at `memoryMb`. */
function lambdaDuration(invocations: number, ms: number, memoryMb: number): number {
  return invocations * (ms / 1000) * (memoryMb / 1024) * PRICES.lambdaArmPerGbSecond;
}

/** The ledger's cost per million emails, unrounded (see {@link ledgerCostModel}). */
function ledgerLines(inputs: LedgerCostInputs): CostLine[] {
  const events = EMAILS * inputs.eventsPerEmail;
  const invocations = events / inputs.batchSize;
  return [
    { item: 'EventBridge (SES events, AWS service events)', usd: events * PRICES.eventBridgePerSesEvent },
    { item: 'SQS requests (buffer queue)', usd: events * inputs.sqsRequestsPerEvent * PRICES.sqsPerRequest },
    { item: 'Lambda requests (ledger)', usd: invocations * PRICES.lambdaPerRequest },
    { item: 'Lambda duration (ledger)', usd: lambdaDuration(invocations, inputs.batchMs, inputs.memoryMb) },
    {
      item: 'DynamoDB (ledger)',
      usd:
        EMAILS *
        (inputs.writeUnitsPerEmail * PRICES.dynamoDbPerWriteUnit +
          inputs.readUnitsPerEmail * PRICES.dynamoDbPerReadUnit),
    },
    { item: 'SNS Publish (delivery status)', usd: EMAILS * inputs.statusPublishesPerEmail * PRICES.snsPerPublish },
  ];
}

/** The send ledger's own cost per million emails at list prices. Pure arithmetic. */
export function ledgerCostModel(inputs: LedgerCostInputs): LedgerCostResult {
  const lines = ledgerLines(inputs);
  const subtotal = lines.reduce((sum, line) => sum + line.usd, 0);
  return {
    inputs,
    lines: lines.map((line) => ({ item: line.item, usd: money(line.usd) })),
    subtotal: money(subtotal),
    shareOfSes: round(subtotal / (EMAILS * PRICES.sesPerEmail), 4),
  };
}

export function costModel(inputs: CostInputs): CostResult {
  const emails = EMAILS;
  const invocations = emails / inputs.batchSize;
  const lambdaTime = (ms: number) => lambdaDuration(invocations, ms, inputs.memoryMb);
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
  const ledgerSubtotal = inputs.ledger ? ledgerLines(inputs.ledger).reduce((sum, line) => sum + line.usd, 0) : 0;
  const rateLease =
    inputs.leaseWritesPerEmail !== undefined ? emails * inputs.leaseWritesPerEmail * PRICES.dynamoDbPerWriteUnit : 0;
  const totalOverhead = dedupeOverhead + ledgerSubtotal + rateLease;
  const eventsBilled = inputs.ledger ? emails * inputs.ledger.eventsPerEmail * EVENTBRIDGE_IF_BILLED : undefined;
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
    ...(inputs.ledger
      ? { ledger: ledgerCostModel(inputs.ledger), totalWithLedger: money(totalOn + ledgerSubtotal) }
      : {}),
    ...(inputs.leaseWritesPerEmail !== undefined ? { rateLease: money(rateLease) } : {}),
    totalOverhead: money(totalOverhead),
    totalOverheadShareOfSes: round(totalOverhead / ses, 4),
    ...(eventsBilled !== undefined
      ? { totalOverheadShareIfEventsBilled: round((totalOverhead + eventsBilled) / ses, 4) }
      : {}),
  };
}
