/**
 * The cancel function behind a function URL of its own (AWS_IAM; the stack's CancelUrl):
 * `DELETE /deliveries/{key}` cancels a key not yet sent (http.ts, cancel.ts).
 *
 * Who may cancel is decided by IAM alone, on this function and its URL: the construct grants
 * invoking the URL to the cancel principals only (grantCancel), and this code checks no identity.
 * The caller's ARN as the URL's AWS_IAM auth reports it in the event is recorded as who cancelled:
 * a label for the timeline, never a permission. (An event given to a direct Invoke can name anyone;
 * a direct Invoke needs lambda:InvokeFunction on this function, which IAM grants or refuses.)
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { teamOfInvocation } from '../kernel/teams';
import { createDynamoDbClient } from '../runtime/clients';
import { readStatusSettings } from '../kernel/environment';
import { handleCancelRequest, requestTarget } from './http';
import { cancelDelivery } from './cancel';

const target = readStatusSettings();
const dynamodb = createDynamoDbClient();
const db = DynamoDBDocumentClient.from(dynamodb);
const logger = new Logger();

/** Who the event says called: the function URL's IAM caller, recorded as who cancelled. */
export function recordedCaller(event: LambdaFunctionURLEvent): string {
  const arn = (event.requestContext as { authorizer?: { iam?: { userArn?: unknown } } }).authorizer?.iam?.userArn;
  return typeof arn === 'string' && arn !== '' ? arn : 'an unidentified caller';
}

export async function handler(
  event: LambdaFunctionURLEvent,
  context?: Pick<Context, 'invokedFunctionArn'>,
): Promise<LambdaFunctionURLResult> {
  // Invoked as a team's alias (its own URL, granted to its cancellers only): that team's keys only.
  const team = teamOfInvocation(context?.invokedFunctionArn);
  return handleCancelRequest(
    event.requestContext.http.method,
    requestTarget(event),
    async (key, team) => {
      const by = recordedCaller(event);
      const result = await cancelDelivery({ ...target, db, dynamodb }, key, by, team);
      logger.info('cancel', {
        dedupeKey: result.report.key,
        outcome: result.outcome,
        status: result.report.status,
        by,
      });
      return result;
    },
    (error) => logger.error('cancel request failed', { error: error as Error }),
    team !== undefined ? { team } : {},
  );
}
