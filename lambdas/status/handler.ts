/**
 * The status function behind the IAM-authenticated function URL:
 * `GET /deliveries/{key}` returns the key's DeliveryReport (see http.ts).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { createDynamoDbClient } from '../runtime/clients';
import { readStatusSettings } from '../kernel/environment';
import { handleStatusRequest } from './http';
import { lookupDelivery, type LookupTarget } from './lookup';

const target: LookupTarget = readStatusSettings();
const db = DynamoDBDocumentClient.from(createDynamoDbClient());
const logger = new Logger();

export async function handler(event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> {
  return handleStatusRequest(
    event.requestContext.http.method,
    event.rawPath,
    (key) => lookupDelivery({ ...target, db }, key),
    (error) => logger.error('delivery status lookup failed', { error: error as Error }),
  );
}
