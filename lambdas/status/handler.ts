/**
 * The status function behind the IAM-authenticated function URL:
 * `GET /deliveries/{key}` returns the key's DeliveryReport (see http.ts).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { LEDGER_ENV } from '../ledger/schema';
import { createDynamoDbClient } from '../send-email/clients';
import { ENV } from '../send-email/settings';
import { handleStatusRequest } from './http';
import { lookupDelivery, type LookupTarget } from './lookup';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') throw new Error(`Missing required environment variable ${name}`);
  return value;
}

const target: LookupTarget = {
  ledgerTableName: required(LEDGER_ENV.tableName),
  idempotencyTableName: required(ENV.tableName),
  keyPrefix: required(ENV.keyPrefix),
};
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
