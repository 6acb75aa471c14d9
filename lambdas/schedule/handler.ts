/**
 * The schedule function's entry point: glue only (the work is in hop.ts). SQS event source on the
 * schedule queue, with ReportBatchItemFailures.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { readScheduleSettings } from '../kernel/environment';
import { createSqsClient } from '../runtime/clients';
import { createScheduleHandler } from './hop';

export const handler = createScheduleHandler({
  settings: readScheduleSettings(),
  sqs: createSqsClient(),
  logger: new Logger(),
  metrics: new Metrics(),
});
