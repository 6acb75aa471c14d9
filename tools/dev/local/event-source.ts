/**
 * A local stand-in for the Lambda SQS event source mapping: it receives
 * batches, builds the same `SQSEvent` Lambda would, invokes the handler one
 * batch at a time (a Lambda container never runs two invocations at once),
 * deletes the records that succeeded and leaves batch item failures on the
 * queue for redelivery. Like a disabled mapping, it receives nothing while paused.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface EventSourceOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly handler: SqsHandler;
  /** Records per invocation (the mapping's BatchSize). */
  readonly batchSize: number;
  /** How long to keep filling a batch (the mapping's MaximumBatchingWindowInSeconds). */
  readonly maxBatchingWindowSeconds: number;
  /** The function timeout: an invocation that runs longer counts as failed. */
  readonly functionTimeoutSeconds: number;
  readonly functionName?: string;
  /**
   * Fault injection for tests: the first N batches are processed but not
   * deleted, as if the container died between the handler's return and the
   * delete. Their messages come back after the visibility timeout. @default 0
   */
  readonly skipDeleteBatches?: number;
  /**
   * Sending is paused (`email-pipeline pause`): checked before each receive, only between batches
   * (the one in hand settled), so a true answer means nothing is in hand and nothing is received
   * until it is false again: messages wait in the queue with their receive counts untouched (the
   * local pause acknowledges it then: lib/cli/local-pause.ts). @default never
   */
  readonly isPaused?: () => boolean;
  /** Called each time a receive was skipped because sending is paused (with the count so far). */
  readonly onPausedPoll?: (polls: number) => void;
  /** Called after each invocation with what happened. */
  readonly onBatch?: (report: BatchReport) => void;
  /** Called when receiving or deleting fails (the loop goes on). */
  readonly onError?: (error: unknown) => void;
}

export interface BatchReport {
  readonly requestId: string;
  readonly size: number;
  readonly failed: readonly string[];
  /** The handler threw or timed out: every record stays on the queue. */
  readonly invocationError?: string;
  /** Fault injection left the processed records on the queue. */
  readonly deleteSkipped?: boolean;
}

/** Converts an SQS API message into the record shape Lambda delivers. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      stringListValues: [],
      binaryListValues: [],
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/** A Lambda context whose remaining time counts down from the function timeout. */
export function makeContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  const requestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${requestId}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function receiveBatch(options: EventSourceOptions, isStopped: () => boolean): Promise<Message[]> {
  const messages: Message[] = [];
  const windowEnds = Date.now() + options.maxBatchingWindowSeconds * 1000;
  do {
    const wanted = Math.min(10, options.batchSize - messages.length);
    const remainingWindow = Math.ceil((windowEnds - Date.now()) / 1000);
    const response = await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: wanted,
        // Long-poll while nothing has arrived; once a batch has started, only wait out the window.
        WaitTimeSeconds: messages.length === 0 ? 1 : Math.max(0, Math.min(remainingWindow, 1)),
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    messages.push(...(response.Messages ?? []));
    if (messages.length === 0) return messages;
  } while (messages.length < options.batchSize && Date.now() < windowEnds && !isStopped());
  return messages;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${ms / 1000} seconds`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs one batch through the handler and settles it on the queue, as Lambda does. */
export async function invokeBatch(
  options: EventSourceOptions,
  messages: readonly Message[],
  skipDelete = false,
): Promise<BatchReport> {
  const records = messages.map((m) => toSqsRecord(m, options.queueArn, options.region));
  const timeoutMs = options.functionTimeoutSeconds * 1000;
  const context = makeContext(options.functionName ?? 'send-email-local', timeoutMs);
  let failed: string[];
  let invocationError: string | undefined;
  try {
    const response = await withTimeout(Promise.resolve(options.handler({ Records: records }, context)), timeoutMs);
    const ids = (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
    const known = new Set(records.map((r) => r.messageId));
    // Lambda treats an unknown or empty identifier as a failure of the whole batch.
    failed = ids.every((id) => known.has(id)) ? ids : [...known];
  } catch (error) {
    invocationError = error instanceof Error ? error.message : String(error);
    failed = records.map((r) => r.messageId);
  }
  const failedSet = new Set(failed);
  const done = messages.filter((m) => !failedSet.has(m.MessageId ?? ''));
  if (done.length > 0 && !skipDelete) {
    const result = await options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
    if (result.Failed?.length)
      options.onError?.(new Error(`could not delete ${result.Failed.length} processed message(s)`));
  }
  return {
    requestId: context.awsRequestId,
    size: records.length,
    failed,
    ...(invocationError !== undefined ? { invocationError } : {}),
    ...(skipDelete ? { deleteSkipped: true } : {}),
  };
}

export interface RunningEventSource {
  /** Stops polling after the batch in hand is settled. */
  stop(): Promise<void>;
}

/** How often a paused event source looks whether sending has resumed. */
const PAUSED_POLL_MS = 250;

/** Polls until stopped; receives nothing while {@link EventSourceOptions.isPaused}. */
export function startEventSource(options: EventSourceOptions): RunningEventSource {
  let stopped = false;
  let skipsLeft = options.skipDeleteBatches ?? 0;
  let pausedPolls = 0;
  const loop = (async () => {
    while (!stopped) {
      try {
        if (options.isPaused?.()) {
          pausedPolls += 1;
          options.onPausedPoll?.(pausedPolls);
          await new Promise((resolve) => setTimeout(resolve, PAUSED_POLL_MS));
          continue;
        }
        const messages = await receiveBatch(options, () => stopped);
        if (messages.length === 0) continue;
        const skip = skipsLeft > 0;
        if (skip) skipsLeft -= 1;
        const report = await invokeBatch(options, messages, skip);
        options.onBatch?.(report);
      } catch (error) {
        options.onError?.(error);
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
