/**
 * The callback function's entry point: glue only (the work is in deliver.ts). SQS event source
 * on the callbacks queue, with ReportBatchItemFailures.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { readCallbackSettings } from './settings';
import { createCallbackHandler } from './deliver';
import { createDynamoDbClient, createSqsClient } from '../runtime/clients';
import { secretsManagerSigningKeys } from './secrets';

const settings = readCallbackSettings();

export const handler = createCallbackHandler({
  settings,
  dynamodb: createDynamoDbClient(),
  sqs: createSqsClient(),
  signingKeys: secretsManagerSigningKeys(settings.targets),
  logger: new Logger(),
  metrics: new Metrics(),
});
