import { round } from '../../../../../tools/dev/bench/stats';
import {
  costModel,
  ledgerCostModel,
  type CostInputs,
  type LedgerCostInputs,
} from '../../../../../tools/dev/bench/cost';

/** The inputs of the 2026-11-29 run in BENCHMARKS.md section 5. */
const SEND_PATH: CostInputs = {
  batchSize: 10,
  memoryMb: 256,
  batchMsOn: 135.2,
  batchMsOff: 101.0,
  writesPerUnique: 2,
  readsPerUnique: 0,
  writesPerDuplicate: 1,
  readsPerDuplicate: 0,
  sqsRequestsPerMessage: 0.2,
};

/** Send + Delivery per email, 40 ms per batch of 10 at 256 MB, one write and one status publish per event. */
const LEDGER: LedgerCostInputs = {
  batchSize: 10,
  memoryMb: 256,
  batchMs: 40,
  eventsPerEmail: 2,
  sqsRequestsPerEvent: 0.2,
  writeUnitsPerEmail: 2,
  readUnitsPerEmail: 0,
  statusPublishesPerEmail: 2,
};

test('send path: the figures of BENCHMARKS.md section 5, by hand', () => {
  const cost = costModel(SEND_PATH);
  // Lambda: 100,000 invocations; 100,000 x 0.1352 s x 0.25 GB = 3,380 GB-s x $0.0000133334 = $0.045067.
  expect(cost.lines.map((l) => l.item).join(', ')).toBe(
    'SES SendEmail, SNS Publish, SQS requests, Lambda requests, Lambda duration, DynamoDB (idempotency)',
  );
  expect(cost.lines.map((l) => l.usd)).toEqual([100, 0.5, 0.08, 0.02, 0.0451, 1.25]);
  expect(cost.totalOn).toBe(101.8951);
  // Off: no DynamoDB, 2,525 GB-s = $0.033667.
  expect(cost.totalOff).toBe(100.6337);
  expect(cost.dedupeOverhead).toBe(1.2614);
  expect(cost.perMillionDuplicates).toEqual({ suppress: 0.625, sesIfSent: 100 });
  expect(cost.ledger).toBeUndefined();
  expect(cost.totalWithLedger).toBeUndefined();
});

test('ledger: each line by hand', () => {
  const ledger = ledgerCostModel(LEDGER);
  // 2M events on the default bus (AWS service events: $0); 0.4M SQS requests x $0.40/M = $0.16;
  // 200,000 invocations x $0.20/M = $0.04; 200,000 x 0.04 s x 0.25 GB = 2,000 GB-s = $0.0266668;
  // 2M WRU x $0.625/M = $1.25; 2M status publishes = $1.
  expect(ledger.lines.map((l) => l.item).join(', ')).toBe(
    'EventBridge (SES events, AWS service events), SQS requests (buffer queue), Lambda requests (ledger), ' +
      'Lambda duration (ledger), DynamoDB (ledger), SNS Publish (delivery status)',
  );
  expect(ledger.lines.map((l) => l.usd)).toEqual([0, 0.16, 0.04, 0.0267, 1.25, 1]);
  // 0 + 0.16 + 0.04 + 0.0266668 + 1.25 + 1 = 2.4766668, of $100 SES.
  expect(ledger.subtotal).toBe(2.4767);
  expect(ledger.shareOfSes).toBe(0.0248);
});

test('ledger reads are priced as read units', () => {
  const withReads = ledgerCostModel({ ...LEDGER, readUnitsPerEmail: 4 });
  // 4M RRU x $0.125/M = $0.50 more.
  expect(withReads.lines.find((l) => l.item === 'DynamoDB (ledger)')?.usd).toBe(1.75);
  expect(withReads.subtotal).toBe(2.9767);
});

test('with the ledger: the send-path figures stay, the total adds the ledger subtotal', () => {
  const without = costModel(SEND_PATH);
  const cost = costModel({ ...SEND_PATH, ledger: LEDGER });
  expect(cost.lines).toEqual(without.lines);
  expect(cost.totalOn).toBe(without.totalOn);
  expect(cost.totalOff).toBe(without.totalOff);
  expect(cost.dedupeOverhead).toBe(without.dedupeOverhead);
  expect(cost.ledger).toEqual(ledgerCostModel(LEDGER));
  // 101.895067 + 2.4766668 = 104.3717338.
  expect(cost.totalWithLedger).toBe(104.3717);
});

test('the whole overhead: dedupe, ledger and rate lease over SES, and the same if SES events were billed', () => {
  const cost = costModel({ ...SEND_PATH, ledger: LEDGER, leaseWritesPerEmail: 0.2 });
  // 0.2M lease writes x $0.625/M = $0.125.
  expect(cost.rateLease).toBe(0.125);
  // 1.2614 (dedupe) + 2.4766668 (ledger) + 0.125 = 3.863...; of $100.
  expect(cost.totalOverhead).toBe(round(cost.dedupeOverhead + (cost.ledger?.subtotal ?? 0) + 0.125, 4));
  expect(cost.totalOverheadShareOfSes).toBe(0.0386);
  // 2M events x $1/M = $2 more.
  expect(cost.totalOverheadShareIfEventsBilled).toBe(0.0586);
});
