/**
 * What each `email-pipeline dlq` subcommand does against a target (command.ts parses and
 * checks the command line): which DLQ and source queue `--queue` names, the question asked before
 * a change (or what a dry run says it would do), and the lines printed.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { formatDeadLetter, listDeadLetters, purge, redrive, type DeadLetter } from './dead-letters';
import {
  cancelMoveTask,
  deleteSelected,
  listMoveTasks,
  matches,
  neverRedriveReason,
  readAll,
  redriveSelected,
  summarize,
} from './select';
import type { Io } from '../cli/command';
import { confirmed } from '../cli/confirm';
import { OperationError } from '../cli/errors';
import { queueDepth } from './ledger-redrive';
import { redriveLedger, stopLedgerRedrive } from './ledger-redrive-command';
import { printable } from '../cli/printable';
import { output, type Target } from '../cli/target';
import {
  describeSelector,
  dryRun,
  selected,
  selectorJson,
  selectorOf,
  type DlqOptions,
  type QueueName,
} from './options';

export { QUEUES, type DlqOptions, type QueueName } from './options';

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

/** An SQS client for the target's queues (the dlq and callbacks commands'). */
export function sqsClient(target: Target): SQSClient {
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

const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/** About how many messages a queue holds now (visible and in flight). */
async function approximately(sqs: SQSClient, url: string): Promise<number> {
  const depth = await queueDepth(sqs, url)();
  return depth.visible + depth.inFlight;
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
    if (sub === 'delete') return await deleteCommand(sqs, dlqUrl, where, options, io);
    if (sub === 'purge') return await purgeCommand(sqs, dlqUrl, where, options, io);
    if (target.local) {
      throw new OperationError('The local emulator has no message move tasks: its redrive copies message by message.');
    }
    if (sub === 'tasks') return await tasks(sqs, dlqUrl, where, options, io);
    const moved = await cancelMoveTask(sqs, options.task ?? '');
    if (options.json) io.out(JSON.stringify({ action: 'stop-task', task: options.task, moved }));
    else io.out(`Stopped the move task; it had moved about ${moved} message(s). The rest stay in ${where}.`);
  } finally {
    sqs.destroy();
  }
}

async function tasks(sqs: SQSClient, dlqUrl: string, where: string, options: DlqOptions, io: Io): Promise<void> {
  const found = await listMoveTasks(sqs, await arnOf(sqs, dlqUrl));
  if (options.json) {
    for (const task of found) io.out(JSON.stringify(task));
    return;
  }
  if (found.length === 0) io.out(`No message move task on ${where}.`);
  for (const t of found) {
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
      io.err(`${letters.length} message(s) ${selector ? `${describeSelector(selector)} ` : ''}in ${where}.`);
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
    io.out(`${capital(where)} ${selectorOf(options) ? 'holds no such message' : 'is empty'}.`);
  } else {
    for (const letter of letters) io.out(formatDeadLetter(letter));
    io.err(`${letters.length} message(s) in ${where}.`);
  }
}

async function deleteCommand(
  sqs: SQSClient,
  dlqUrl: string,
  where: string,
  options: DlqOptions,
  io: Io,
): Promise<void> {
  const selector = selectorOf(options) ?? {};
  const what = describeSelector(selector);
  if (options.mode !== 'yes') {
    const { letters, scanned } = await selected(sqs, dlqUrl, selector);
    if (options.mode === 'dry-run') {
      dryRun(
        io,
        options,
        { action: 'delete', queue: options.queue, ...selectorJson(selector), count: letters.length, scanned },
        letters,
        `Would delete ${letters.length} message(s) ${what} from ${where} (${scanned} scanned), for good.`,
      );
      return;
    }
    if (letters.length === 0) {
      io.out(`${capital(where)} holds no message ${what}: nothing to delete (${scanned} scanned).`);
      return;
    }
    await confirmed(options.mode ?? 'ask', `Delete ${letters.length} message(s) ${what} from ${where} for good?`, io);
  }
  const { deleted, scanned } = await deleteSelected(sqs, { dlqUrl, selector });
  if (options.json) {
    io.out(JSON.stringify({ action: 'delete', queue: options.queue, ...selectorJson(selector), deleted, scanned }));
  } else {
    io.out(`Deleted ${deleted} message(s) ${what} from ${where} (${scanned} scanned).`);
  }
}

async function purgeCommand(sqs: SQSClient, dlqUrl: string, where: string, options: DlqOptions, io: Io): Promise<void> {
  if (options.mode !== 'yes') {
    const count = await approximately(sqs, dlqUrl);
    if (options.mode === 'dry-run') {
      dryRun(
        io,
        options,
        { action: 'purge', queue: options.queue, approximateCount: count },
        [],
        `Would purge ${where}: every message in it (about ${count}) deleted for good.`,
      );
      return;
    }
    await confirmed(options.mode ?? 'ask', `Delete every message in ${where} (about ${count}) for good?`, io);
  }
  await purge(sqs, dlqUrl);
  if (options.json) io.out(JSON.stringify({ action: 'purge', queue: options.queue }));
  else io.out(`Purged ${where}.`);
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
  const mode = options.mode ?? 'ask';
  if (options.stop) return stopLedgerRedrive(sqs, target, dlqUrl, where, options.json, io);
  if (options.queue === 'ledger') {
    if (mode !== 'yes') {
      const count = await approximately(sqs, dlqUrl);
      const doing = `the ledger function's mapping of ${where} enabled until it is empty or stops shrinking`;
      if (mode === 'dry-run') {
        dryRun(
          io,
          options,
          { action: 'redrive', queue: 'ledger', approximateCount: count },
          [],
          `Would redrive about ${count} SES event(s) through the ledger function: ${doing}.`,
        );
        return;
      }
      if (count === 0) {
        io.out(`${capital(where)} is empty: nothing to redrive.`);
        return;
      }
      await confirmed(mode, `Redrive about ${count} SES event(s) of ${where} through the ledger function?`, io);
    }
    return redriveLedger(sqs, target, dlqUrl, where, options.stallSeconds, options.json, io);
  }
  const selector = selectorOf(options);
  if (selector?.code !== undefined && !options.force) {
    const why = neverRedriveReason(selector.code);
    if (why) throw new OperationError(`${selector.code} is never redriven: ${why}. Add --force to redrive it anyway.`);
  }
  const neverRedriven = (l: DeadLetter) => neverRedriveReason(l.errorCode) !== undefined;
  if (selector) {
    const what = describeSelector(selector);
    if (mode !== 'yes') {
      const { letters, scanned } = await selected(sqs, dlqUrl, selector);
      const left = options.force ? [] : letters.filter(neverRedriven);
      const moving = letters.filter((l) => !left.includes(l)).slice(0, options.max ?? Number.POSITIVE_INFINITY);
      if (mode === 'dry-run') {
        dryRun(
          io,
          options,
          {
            action: 'redrive',
            mode: 'selected',
            queue: options.queue,
            ...selectorJson(selector),
            count: moving.length,
            neverRedriven: left.length,
            scanned,
          },
          moving,
          `Would move ${moving.length} message(s) ${what} from ${where} back to its queue (${scanned} scanned)` +
            `${left.length > 0 ? `, leaving ${left.length} whose code is never redriven (--force moves them too)` : ''}.`,
        );
        return;
      }
      if (moving.length === 0) {
        io.out(
          `${capital(where)} holds no message ${what} to redrive (${scanned} scanned${left.length > 0 ? `; ${left.length} whose code is never redriven, --force moves them` : ''}).`,
        );
        return;
      }
      await confirmed(mode, `Move ${moving.length} message(s) ${what} from ${where} back to its queue?`, io);
    }
    const result = await redriveSelected(sqs, {
      dlqUrl,
      sourceQueueUrl,
      selector,
      ...(options.max ? { max: options.max } : {}),
      ...(options.force ? {} : { skip: neverRedriven }),
    });
    if (options.json) {
      io.out(
        JSON.stringify({
          action: 'redrive',
          mode: 'selected',
          queue: options.queue,
          ...selectorJson(selector),
          ...result,
        }),
      );
    } else {
      io.out(`Moved ${result.moved} message(s) ${what} from ${where} back to its queue (${result.scanned} scanned).`);
    }
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
  const moveTask = !target.local && options.queue !== 'subscription';
  const native = moveTask && !options.copy;
  const how = native
    ? `SQS's message move task${options.rate ? ` at up to ${options.rate} message(s) per second` : ''}`
    : `copies, one by one${options.max !== undefined ? `, at most ${options.max}` : ''}`;
  if (!native && !options.copy && !options.json) {
    io.err(
      `${target.local ? 'The local emulator' : 'The subscription DLQ'} has no message move task: the messages are moved one by one.`,
    );
  }
  if (mode !== 'yes') {
    const count = await approximately(sqs, dlqUrl);
    if (mode === 'dry-run') {
      dryRun(
        io,
        options,
        {
          action: 'redrive',
          mode: native ? 'move-task' : 'copy',
          queue: options.queue,
          approximateCount: count,
          ...(options.max !== undefined ? { max: options.max } : {}),
          ...(options.rate !== undefined ? { rate: options.rate } : {}),
        },
        [],
        `Would move ${options.max !== undefined ? `up to ${options.max} of the` : 'all the'} messages of ${where} (about ${count}) back to its queue, with ${how}.`,
      );
      return;
    }
    if (count === 0) {
      io.out(`${capital(where)} is empty: nothing to redrive.`);
      return;
    }
    await confirmed(
      mode,
      `Move ${options.max !== undefined ? `up to ${options.max} of the` : 'all the'} messages of ${where} (about ${count}) back to its queue, with ${how}?`,
      io,
    );
  }
  const result = await redrive(sqs, {
    dlqUrl,
    dlqArn: native ? await arnOf(sqs, dlqUrl) : '',
    sourceQueueUrl,
    sourceQueueArn: native ? await arnOf(sqs, sourceQueueUrl) : '',
    ...(options.max !== undefined ? { max: options.max } : {}),
    ...(options.rate !== undefined ? { ratePerSecond: options.rate } : {}),
    copyOnly: !native,
  });
  if (options.json) {
    io.out(
      JSON.stringify({
        action: 'redrive',
        mode: result.mode === 'native' ? 'move-task' : 'copy',
        queue: options.queue,
        ...(result.mode === 'native' ? { taskHandle: result.taskHandle } : { moved: result.moved }),
        ...(options.rate !== undefined ? { rate: options.rate } : {}),
      }),
    );
    return;
  }
  io.out(
    result.mode === 'native'
      ? `Started the SQS message move task ${result.taskHandle ?? ''} on ${target.description}${options.rate ? ` at up to ${options.rate} message(s) per second` : ''}: every message of ${dlqName(options.queue)} goes back to its queue (dlq tasks shows progress, dlq stop-task stops it).`
      : `Moved ${result.moved} message(s) from ${dlqName(options.queue)} back to the queue of ${target.description}. ` +
          'Copies of emails already sent are suppressed by the pipeline.',
  );
}
