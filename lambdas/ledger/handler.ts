/**
 * Placeholder entry of the ledger function, so the construct can be
 * synthesized; the ledger function itself (SES events -> ledger items)
 * replaces this file. Until then every batch is handed back whole, so no
 * event is lost.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
}
