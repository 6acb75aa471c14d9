/**
 * One local consumer ("pod"): a process that loads the handler bundle, as a
 * Lambda container would, and feeds it batches from the queue. Started by
 * tools/dev/local/pipeline.ts; everything it is told comes through the environment.
 * Handler log lines pass through stdout untouched; this file adds its own lines
 * as JSON with a `consumer` field.
 */
import { existsSync } from 'node:fs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { PauseWatch } from '../../../lib/cli/local-pause';
import { startEventSource, type SqsHandler } from './event-source';
import { OUT_OF_MEMORY_EVENT, watchMemory } from './memory-watch';

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`consumer: missing environment variable ${name}`);
  return value;
}

function emit(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ consumer: process.env.CONSUMER_NAME ?? 'consumer', event, ...fields })}\n`);
}

async function main(): Promise<void> {
  // The function's memory, as Lambda states it: above it the consumer dies as a container would.
  const limitMb = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  const memory =
    limitMb > 0
      ? watchMemory({
          limitMb,
          onExceeded: (rssMb, peakMb) => emit(OUT_OF_MEMORY_EVENT, { rssMb, peakMb, limitMb }),
        })
      : undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { handler } = require(need('HANDLER_BUNDLE')) as { handler: SqsHandler };
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  const pauseFile = process.env.SEND_PAUSE_FILE;
  // What both sources share: the function (handler, batches, timeout) and how it reports.
  const common = {
    sqs,
    region: need('AWS_REGION'),
    handler,
    batchSize: Number(need('BATCH_SIZE')),
    maxBatchingWindowSeconds: Number(need('BATCHING_WINDOW_SECONDS')),
    functionTimeoutSeconds: Number(need('FUNCTION_TIMEOUT_SECONDS')),
    onError: (error: unknown) => emit('error', { error: error instanceof Error ? error.message : String(error) }),
  };
  // The queue this consumer polls (the high lane's has its own); the handler's SOURCE_QUEUE_URL is the work queue.
  const queueUrl = process.env.POLL_QUEUE_URL || need('SOURCE_QUEUE_URL');
  const functionName = process.env.CONSUMER_NAME ?? 'send-email-local';
  // email-pipeline pause (locally): a flag file, looked at between batches and acknowledged (lib/cli/local-pause.ts).
  const pause = pauseFile ? new PauseWatch(pauseFile, functionName, queueUrl) : undefined;
  pause?.register();
  const source = startEventSource({
    ...common,
    queueUrl,
    queueArn: need('SOURCE_QUEUE_ARN'),
    functionName,
    skipDeleteBatches: Number(process.env.LOCAL_FAULT_SKIP_DELETE_BATCHES ?? '0'),
    ...(pause ? { isPaused: () => pause.isPaused(), onPausedPoll: (polls) => emit('paused', { polls }) } : {}),
    onBatch: (report) => emit('batch', { ...report, ...(memory ? { peakRssMb: memory.peakMb() } : {}) }),
  });
  // The ledger consumer's second source, on the ledger DLQ (the ledger function's disabled mapping on
  // AWS): it receives only while `dlq redrive --queue ledger` has written its flag file.
  const redriveFile = process.env.REDRIVE_FLAG_FILE;
  const redrive = redriveFile
    ? startEventSource({
        ...common,
        queueUrl: need('REDRIVE_QUEUE_URL'),
        queueArn: need('REDRIVE_QUEUE_ARN'),
        functionName: process.env.CONSUMER_NAME ?? 'ledger-local',
        isPaused: () => !existsSync(redriveFile),
        onBatch: (report) => emit('batch', { ...report, source: 'dead-letters' }),
      })
    : undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.all([source.stop(), redrive?.stop()]);
    pause?.unregister();
    emit('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  // The parent holds our stdin: when it goes away, so do we.
  const gone = () => {
    pause?.unregister();
    process.exit(0);
  };
  process.stdin.on('end', gone);
  process.stdin.on('error', gone);
  process.stdin.resume();
  emit('ready', { pid: process.pid });
}

main().catch((error) => {
  emit('error', { error: error instanceof Error ? error.message : String(error), fatal: true });
  process.exit(1);
});
