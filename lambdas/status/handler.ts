/**
 * The status function behind the IAM-authenticated function URL:
 * `GET /deliveries/{key}` returns the key's DeliveryReport, `DELETE /deliveries/{key}` cancels a
 * key not yet sent (see http.ts, cancel.ts) when the caller is one of the cancel principals
 * (authorize.ts); who cancelled is the caller's IAM ARN, as the function URL authenticated it.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { createDynamoDbClient } from '../runtime/clients';
import { readStatusSettings } from '../kernel/environment';
import { CancelNotAllowedError, mayCancel } from './authorize';
import { handleStatusRequest } from './http';
import { cancelDelivery } from './cancel';
import { lookupDelivery } from './lookup';

const target = readStatusSettings();
const dynamodb = createDynamoDbClient();
const db = DynamoDBDocumentClient.from(dynamodb);
const logger = new Logger();

/** The caller as the function URL's AWS_IAM auth saw it (its ARN); never a value the caller wrote itself. */
function caller(event: LambdaFunctionURLEvent): string | undefined {
  return (event.requestContext as { authorizer?: { iam?: { userArn?: string } } }).authorizer?.iam?.userArn;
}

export async function handler(event: LambdaFunctionURLEvent): Promise<LambdaFunctionURLResult> {
  return handleStatusRequest(
    event.requestContext.http.method,
    event.rawPath,
    (key) => lookupDelivery({ ...target, db }, key),
    (error) => logger.error('delivery status request failed', { error: error as Error }),
    async (key) => {
      const arn = caller(event);
      const by = arn ?? 'an unidentified caller';
      if (!mayCancel(arn, target.cancelPrincipalArns)) {
        logger.warn('cancel refused: not a cancel principal', { by });
        throw new CancelNotAllowedError(by);
      }
      const result = await cancelDelivery({ ...target, db, dynamodb }, key, by);
      logger.info('cancel', {
        dedupeKey: result.report.key,
        outcome: result.outcome,
        status: result.report.status,
        by,
      });
      return result;
    },
  );
}
