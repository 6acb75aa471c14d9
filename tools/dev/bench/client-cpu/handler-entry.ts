/**
 * The send-email handler as main.ts builds it (handler.ts: settings, Powertools, the
 * DynamoDB clients of clients.ts), with SES answering at once and SQS refusing every call:
 * what the client-CPU benchmark loads in a fresh process. Bundled with the deployed options.
 */
import { createContainerHandler } from '../../../../lambdas/send-email/handler';

let sent = 0;

export const handler = createContainerHandler({
  ses: {
    send: () => {
      sent += 1;
      return Promise.resolve({ MessageId: `bench-${sent}` });
    },
  },
  // A clean run neither dead-letters nor retries: any SQS call fails the record, and so the run.
  sqs: { send: () => Promise.reject(new Error('bench: unexpected SQS call (a dead-letter or a retry)')) },
});
