/**
 * What each `email-pipeline dlq` subcommand does against a target (dlq-command.ts parses and
 * checks the command line): which DLQ and source queue `--queue` names, and the lines printed.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { formatDeadLetter, listDeadLetters, purge, redrive, type DeadLetter } from '../dlq';
import {
  cancelMoveTask,
  deleteSelected,
  listMoveTasks,
  matches,
  neverRedriveReason,
  readAll,
  redriveSelected,
  summarize,
  type Selector,
} from '../dlq-select';
import type { Io } from './command';
import { OperationError } from './errors';
import { redriveLedger } from './ledger-redrive-command';
import { printable } from './printable';
import { output, type Target } from './target';

export const QUEUES = ['send', 'ledger', 'subscription'] as const;
export type QueueName = (typeof QUEUES)[number];

export interface DlqOptions {
  readonly queue: QueueName;
  readonly json: boolean;
  readonly summary: boolean;
  readonly force: boolean;
  readonly code?: string;
  readonly key?: string;
  readonly task?: string;
  readonly max?: number;
  readonly rate?: number;
  /** dlq redrive --queue ledger: stop after this long without the DLQ shrinking. */
  readonly stallSeconds?: number;
}

/** How long a ledger DLQ redrive waits for the DLQ to shrink before it stops (--stall). */
export { DEFAULT_STALL_SECONDS } from './ledger-redrive';

/** The outputs naming each DLQ and the queue its messages go back to. */
const QUEUE_OUTPUTS: Readonly<Record<QueueName, { readonly dlq: string; readonly source: string }>> = {
  send: { dlq: 'DeadLetterQueueUrl', source: 'QueueUrl' },
  ledger: { dlq: 'LedgerDeadLetterQueueUrl', source: 'LedgerBufferQueueUrl' },
  // Not an SQS DLQ (the subscription's redrive policy names it): SQS's move task cannot take it.
  subscription: { dlq: 'SubscriptionDeadLetterQueueUrl', source: 'QueueUrl' },
};

/** How the DLQ is named in what the CLI prints. */
export function dlqName(queue: QueueName): string {
  return queue === 'send' ? 'the DLQ' : `the ${queue} DLQ`;
}

function sqsClient(target: Target): SQSClient {
  // Local queue URLs name a host that does not resolve: always use the configured endpoint.
  return new SQSClient({ ...target.clients.sqs, useQueueUrlAsEndpoint: false });
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new OperationError(`Could not read the ARN of ${queueUrl}.`);
  return arn;
}

function selectorOf(options: DlqOptions): Selector | undefined {
  if (options.code === undefined && options.key === undefined) return undefined;
  return {
    ...(options.code !== undefined ? { code: options.code } : {}),
    ...(options.key !== undefined ? { key: options.key } : {}),
  };
}

function describeSelector(selector: Selector): string {
  return [
    selector.code !== undefined ? `code ${printable(selector.code)}` : '',
    selector.key !== undefined ? `key ${printable(selector.key)}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
}

/** Runs one dlq subcommand against the target. */
export async function operate(sub: string, target: Target, options: DlqOptions, io: Io): Promise<void> {
  const names = QUEUE_OUTPUTS[options.queue];
  const dlqUrl = output(target, names.dlq);
  const where = `${dlqName(options.queue)} of ${target.description}`;
  const sqs = sqsClient(target);
  try {
    if (sub === 'list') return await list(sqs, dlqUrl, where, options, io);
    if (sub === 'redrive')
      return await redriveCommand(sqs, target, dlqUrl, output(target, names.source), where, options, io);
    if (sub === 'delete') {
      const selector = selectorOf(options) ?? {};
      const { deleted, scanned } = await deleteSelected(sqs, { dlqUrl, selector });
      io.out(`Deleted ${deleted} message(s) with ${describeSelector(selector)} from ${where} (${scanned} scanned).`);
      return;
    }
    if (sub === 'purge') {
      await purge(sqs, dlqUrl);
      io.out(`Purged ${where}.`);
      return;
    }
    if (target.local) {
      throw new OperationError('The local emulator has no message move tasks: its redrive copies message by message.');
    }
    if (sub === 'tasks') {
      const tasks = await listMoveTasks(sqs, await arnOf(sqs, dlqUrl));
      if (options.json) for (const task of tasks) io.out(JSON.stringify(task));
      else if (tasks.length === 0) io.out(`No message move task on ${where}.`);
      for (const t of options.json ? [] : tasks) {
        const progress = t.toMove !== undefined ? `${t.moved}/${t.toMove}` : String(t.moved);
        io.out(
          [
            t.status.padEnd(10),
            `moved ${progress}`,
            t.startedAt ?? '-',
            t.ratePerSecond ? `${t.ratePerSecond}/s` : 'max rate',
            t.taskHandle ?? '-',
            t.failureReason ?? '',
          ]
            .map((part) => printable(part))
            .join('  ')
            .trimEnd(),
        );
      }
      return;
    }
    const moved = await cancelMoveTask(sqs, options.task ?? '');
    io.out(`Cancelled the move task; it had moved about ${moved} message(s). The rest stay in ${where}.`);
  } finally {
    sqs.destroy();
  }
}

async function list(sqs: SQSClient, dlqUrl: string, where: string, options: DlqOptions, io: Io): Promise<void> {
  const selector = selectorOf(options);
  if (options.summary || selector) {
    const letters = (await readAll(sqs, dlqUrl, options.summary ? 10_000 : Number.POSITIVE_INFINITY)).filter(
      (l) => !selector || matches(l, selector),
    );
    if (options.summary) {
      const counts = summarize(letters);
      for (const c of counts) {
        io.out(
          options.json
            ? JSON.stringify(c)
            : `${String(c.count).padStart(6)}  ${printable(c.errorClass).padEnd(17)}  ${printable(c.errorCode)}` +
                (c.neverRedrive ? `  (never redriven: ${c.neverRedrive})` : ''),
        );
      }
      io.err(`${letters.length} message(s) in ${where}.`);
      return;
    }
    printLetters(letters.slice(0, options.max ?? 100), where, options, io);
    return;
  }
  printLetters(await listDeadLetters(sqs, dlqUrl, options.max ?? 100), where, options, io);
}

function printLetters(letters: readonly DeadLetter[], where: string, options: DlqOptions, io: Io): void {
  if (options.json) {
    for (const letter of letters) io.out(JSON.stringify(letter));
  } else if (letters.length === 0) {
    io.out(
      `${where.charAt(0).toUpperCase()}${where.slice(1)} ${selectorOf(options) ? 'holds no such message' : 'is empty'}.`,
    );
  } else {
    for (const letter of letters) io.out(formatDeadLetter(letter));
    io.err(`${letters.length} message(s) in ${where}.`);
  }
}

async function redriveCommand(
  sqs: SQSClient,
  target: Target,
  dlqUrl: string,
  sourceQueueUrl: string,
  where: string,
  options: DlqOptions,
  io: Io,
): Promise<void> {
  if (options.queue === 'ledger') return redriveLedger(sqs, target, dlqUrl, where, options.stallSeconds, io);
  const selector = selectorOf(options);
  if (selector?.code !== undefined && !options.force) {
    const why = neverRedriveReason(selector.code);
    if (why) throw new OperationError(`${selector.code} is never redriven: ${why}. Add --force to redrive it anyway.`);
  }
  if (selector) {
    const skip = options.force ? undefined : (l: DeadLetter) => neverRedriveReason(l.errorCode) !== undefined;
    const result = await redriveSelected(sqs, {
      dlqUrl,
      sourceQueueUrl,
      selector,
      ...(options.max ? { max: options.max } : {}),
      ...(skip ? { skip } : {}),
    });
    io.out(
      `Moved ${result.moved} message(s) with ${describeSelector(selector)} from ${where} back to its queue (${result.scanned} scanned).`,
    );
    if (result.skipped > 0) {
      io.err(
        `Left ${result.skipped} message(s) whose code is never redriven (dlq list --key shows why); --force moves them too.`,
      );
    }
    return;
  }
  if (!options.force) {
    const never = summarize(await readAll(sqs, dlqUrl)).filter((c) => c.neverRedrive);
    if (never.length > 0) {
      throw new OperationError(
        `${where} holds messages a redrive cannot fix (${never.map((c) => `${c.count} ${c.errorCode}`).join(', ')}): ` +
          'redrive the others by code (dlq redrive --code C), delete these (dlq delete --code C), or add --force to move everything.',
      );
    }
  }
  const native = !target.local && options.queue !== 'subscription' && options.max === undefined;
  const result = await redrive(sqs, {
    dlqUrl,
    dlqArn: native ? await arnOf(sqs, dlqUrl) : '',
    sourceQueueUrl,
    sourceQueueArn: native ? await arnOf(sqs, sourceQueueUrl) : '',
    ...(options.max !== undefined ? { max: options.max } : {}),
    ...(options.rate !== undefined ? { ratePerSecond: options.rate } : {}),
    copyOnly: !native,
  });
  io.out(
    result.mode === 'native'
      ? `Started the SQS message move task ${result.taskHandle ?? ''} on ${target.description}${options.rate ? ` at up to ${options.rate} message(s) per second` : ''}: every message of ${dlqName(options.queue)} goes back to its queue (dlq tasks shows progress, dlq cancel stops it).`
      : `Moved ${result.moved} message(s) from ${dlqName(options.queue)} back to the queue of ${target.description}. ` +
          'Copies of emails already sent are suppressed by the pipeline.',
  );
}
