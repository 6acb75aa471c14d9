/**
 * The status function behind its IAM-authenticated function URL (the stack's StatusUrl):
 * `GET /deliveries/{key}` returns the key's DeliveryReport (see http.ts, lookup.ts). It reads
 * only: its role may not write a cancel mark, and a DELETE is answered 405, so neither a reader
 * nor anyone who may invoke this function directly can cancel through it. Cancels have a function
 * and a URL of their own (cancel-handler.ts).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { teamOfInvocation } from '../kernel/teams';
import { createDynamoDbClient } from '../runtime/clients';
import { readStatusSettings } from '../kernel/environment';
import { handleStatusRequest, requestTarget } from './http';
import { lookupDelivery } from './lookup';

const target = readStatusSettings();
const db = DynamoDBDocumentClient.from(createDynamoDbClient());
const logger = new Logger();

export async function handler(
  event: LambdaFunctionURLEvent,
  context?: Pick<Context, 'invokedFunctionArn'>,
): Promise<LambdaFunctionURLResult> {
  // Invoked as a team's alias (its own URL, granted to its readers only): that team's keys only.
  const team = teamOfInvocation(context?.invokedFunctionArn);
  return handleStatusRequest(
    event.requestContext.http.method,
    requestTarget(event),
    (key, team) => lookupDelivery({ ...target, db }, key, team),
    (error) => logger.error('delivery status request failed', { error: error as Error }),
    team !== undefined ? { team } : {},
  );
}
