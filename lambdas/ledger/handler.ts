/**
 * The ledger function's entry point: glue only (the work is in ledger.ts). SQS event source
 * on the SES events buffer queue, with ReportBatchItemFailures.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SNSClient } from '@aws-sdk/client-sns';
import { createDynamoDbClient } from '../runtime/clients';
import { readLedgerSettings } from '../kernel/environment';
import { createLedgerHandler } from './ledger';

export const handler = createLedgerHandler({
  settings: readLedgerSettings(),
  dynamodb: createDynamoDbClient(),
  sns: new SNSClient({ maxAttempts: 3 }),
  logger: new Logger(),
  metrics: new Metrics(),
});
