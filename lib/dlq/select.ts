/**
 * Selective DLQ operations (the operator CLI's `dlq list --summary|--code`, `dlq redrive --code|--key`,
 * `dlq delete --key`): a scan that receives every message once (each stays hidden until the scan
 * ends, so none is seen twice), acts on those that match and makes the rest visible again.
 * A redriven message is sent to its source queue with the publisher's attributes (not the DLQ's
 * diagnosis, not the retry attributes: it starts a fresh retry budget) and only then deleted: a
 * failure in between leaves it in both queues (the pipeline's dedupe absorbs the copy), never in
 * neither. Also what codes must never be redriven, and the native move tasks' progress.
 */
import {
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { teamKey } from '../../lambdas/kernel/teams';
import { describeDeadLetter, moveBack, type DeadLetter } from './dead-letters';

/**
 * Codes a redrive cannot fix: the same message fails the same way (the publisher's fault), or
 * must not be fed back at all. Redriven only with --force.
 */
export const NEVER_REDRIVE: Readonly<Record<string, string>> = {
  KeyReusedWithDifferentContent:
    'the key was already used for a different email; redriven, it is refused again. Publish the new email under a new key',
  InvalidJson: 'the body is not JSON; the publisher must fix it and publish again',
  InvalidEnvelope: 'the SNS envelope is malformed; the same body fails again',
  NotAnEnvelope: 'the body is not an SNS envelope from the topic; the same body fails again',
  UnreadableBody: 'the body cannot be read; the same body fails again',
  InvalidMessage:
    'the message breaks the contract (the reason names the field); the publisher must fix it and publish again',
  InvalidKey: 'the idempotency-key attribute is invalid; the publisher must fix it and publish again',
  MissingIdempotencyKey: 'the message has no dedupe key; the same message fails again',
  ForeignTopic:
    'the message did not come from the pipeline topic: feeding it back would mail a message of unknown origin',
};

/** Why `code` is never redriven, or undefined when it may be. */
export function neverRedriveReason(code: string): string | undefined {
  return Object.hasOwn(NEVER_REDRIVE, code) ? NEVER_REDRIVE[code] : undefined;
}

/** Which messages a selective operation takes. */
export interface Selector {
  readonly code?: string;
  readonly key?: string;
  /** Any of these keys (the CLI's repeated --key). */
  readonly keys?: readonly string[];
  /** Only a team's: keys in its namespace, `<team>#...` (the DLQ's dedupe-key attribute, kernel/teams.ts). */
  readonly team?: string;
}

function sameKey(key: string, wanted: string): boolean {
  return key === wanted || key.normalize('NFC') === wanted.normalize('NFC');
}

/**
 * True when the dead letter matches every part of the selector (its key: `key`, one of `keys`, and
 * in `team`'s namespace).
 */
export function matches(letter: DeadLetter, selector: Selector): boolean {
  if (selector.code !== undefined && letter.errorCode !== selector.code) return false;
  const key = letter.dedupeKey;
  if (selector.team !== undefined && (key === undefined || !key.startsWith(teamKey(selector.team, '')))) return false;
  if (selector.key !== undefined && (key === undefined || !sameKey(key, selector.key))) return false;
  if (selector.keys !== undefined && (key === undefined || !selector.keys.some((k) => sameKey(key, k)))) return false;
  return true;
}

/** One line of `dlq list --summary`. */
export interface CodeCount {
  readonly errorCode: string;
  readonly errorClass: string;
  readonly count: number;
  /** Why it is never redriven, when it is not. */
  readonly neverRedrive?: string;
}

/** Dead letters counted by code, most first. */
export function summarize(letters: readonly DeadLetter[]): CodeCount[] {
  const counts = new Map<string, { errorClass: string; count: number }>();
  for (const l of letters) {
    const entry = counts.get(l.errorCode) ?? { errorClass: l.errorClass, count: 0 };
    entry.count += 1;
    counts.set(l.errorCode, entry);
  }
  return [...counts.entries()]
    .map(([errorCode, { errorClass, count }]) => {
      const never = neverRedriveReason(errorCode);
      return { errorCode, errorClass, count, ...(never ? { neverRedrive: never } : {}) };
    })
    .sort((a, b) => b.count - a.count || (a.errorCode < b.errorCode ? -1 : 1));
}

export interface ScanOptions {
  readonly dlqUrl: string;
  /** At most this many messages scanned. @default 10000 */
  readonly maxScanned?: number;
  /** How long each message stays hidden while the scan runs. @default 300 */
  readonly visibilitySeconds?: number;
}

/**
 * Receives every message once and hands each to `act` with what it says; messages `act` does not
 * report as `removed` are made visible again at the end. Resolves to the number acted on.
 */
export async function scan(
  sqs: SQSClient,
  options: ScanOptions,
  act: (message: Message, letter: DeadLetter) => Promise<'removed' | 'kept'>,
): Promise<{ scanned: number; removed: number }> {
  const max = options.maxScanned ?? 10_000;
  const kept: Message[] = [];
  let scanned = 0;
  let removed = 0;
  try {
    while (scanned < max) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.dlqUrl,
          MaxNumberOfMessages: Math.min(10, max - scanned),
          VisibilityTimeout: options.visibilitySeconds ?? 300,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      if (Messages.length === 0) break;
      for (const message of Messages) {
        scanned += 1;
        if ((await act(message, describeDeadLetter(message))) === 'removed') removed += 1;
        else kept.push(message);
      }
    }
  } finally {
    for (let i = 0; i < kept.length; i += 10) {
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.dlqUrl,
          Entries: kept
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '', VisibilityTimeout: 0 })),
        }),
      );
    }
  }
  return { scanned, removed };
}

/** Every dead letter (up to `max`), read without removing any. */
export async function readAll(sqs: SQSClient, dlqUrl: string, max = 10_000): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await scan(sqs, { dlqUrl, maxScanned: max }, async (_, letter) => {
    letters.push(letter);
    return 'kept';
  });
  return letters;
}

/** Sends the matching messages back to `sourceQueueUrl`, then deletes them from the DLQ. */
export function redriveSelected(
  sqs: SQSClient,
  options: {
    readonly dlqUrl: string;
    readonly sourceQueueUrl: string;
    readonly selector: Selector;
    readonly max?: number;
    /** Matching messages left where they are (counted as skipped): codes never redriven without --force. */
    readonly skip?: (letter: DeadLetter) => boolean;
  },
): Promise<{ scanned: number; moved: number; skipped: number }> {
  return moveMatching(sqs, options, (_, letter) =>
    !matches(letter, options.selector) ? 'keep' : options.skip?.(letter) ? 'skip' : 'move',
  );
}

/**
 * Moves the messages `pick` says to move back to `sourceQueueUrl` (with their attributes but
 * `dropped`: by default the send DLQ's diagnosis), then deletes them from the DLQ; those it says
 * to skip stay and are counted. At most `max` are moved. Any DLQ: the callbacks' too.
 */
export async function moveMatching(
  sqs: SQSClient,
  options: {
    readonly dlqUrl: string;
    readonly sourceQueueUrl: string;
    readonly max?: number;
    readonly dropped?: ReadonlySet<string>;
  },
  pick: (message: Message, letter: DeadLetter) => 'move' | 'skip' | 'keep',
): Promise<{ scanned: number; moved: number; skipped: number }> {
  let moved = 0;
  let skipped = 0;
  const result = await scan(sqs, { dlqUrl: options.dlqUrl }, async (message, letter) => {
    if (moved >= (options.max ?? Number.POSITIVE_INFINITY)) return 'kept';
    const picked = pick(message, letter);
    if (picked === 'skip') skipped += 1;
    if (picked !== 'move') return 'kept';
    await moveBack(sqs, message, options, options.dropped);
    moved += 1;
    return 'removed';
  });
  return { scanned: result.scanned, moved, skipped };
}

/** Deletes the matching messages for good. */
export async function deleteSelected(
  sqs: SQSClient,
  options: { readonly dlqUrl: string; readonly selector: Selector },
): Promise<{ scanned: number; deleted: number }> {
  const result = await scan(sqs, { dlqUrl: options.dlqUrl }, async (message, letter) => {
    if (!matches(letter, options.selector)) return 'kept';
    await sqs.send(new DeleteMessageCommand({ QueueUrl: options.dlqUrl, ReceiptHandle: message.ReceiptHandle ?? '' }));
    return 'removed';
  });
  return { scanned: result.scanned, deleted: result.removed };
}

/** A native message move task as `dlq tasks` shows it. */
export interface MoveTask {
  readonly status: string;
  readonly taskHandle?: string;
  readonly moved: number;
  readonly toMove?: number;
  readonly startedAt?: string;
  readonly ratePerSecond?: number;
  readonly failureReason?: string;
}

/** The DLQ's recent move tasks, newest first (ListMessageMoveTasks). */
export async function listMoveTasks(sqs: SQSClient, dlqArn: string): Promise<MoveTask[]> {
  const { Results = [] } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }));
  return Results.map((r) => ({
    status: r.Status ?? 'UNKNOWN',
    ...(r.TaskHandle ? { taskHandle: r.TaskHandle } : {}),
    moved: r.ApproximateNumberOfMessagesMoved ?? 0,
    ...(r.ApproximateNumberOfMessagesToMove !== undefined ? { toMove: r.ApproximateNumberOfMessagesToMove } : {}),
    ...(r.StartedTimestamp !== undefined ? { startedAt: new Date(r.StartedTimestamp).toISOString() } : {}),
    ...(r.MaxNumberOfMessagesPerSecond !== undefined ? { ratePerSecond: r.MaxNumberOfMessagesPerSecond } : {}),
    ...(r.FailureReason ? { failureReason: r.FailureReason } : {}),
  }));
}

/** Cancels a running move task; resolves to the messages it had moved. */
export async function cancelMoveTask(sqs: SQSClient, taskHandle: string): Promise<number> {
  const { ApproximateNumberOfMessagesMoved } = await sqs.send(
    new CancelMessageMoveTaskCommand({ TaskHandle: taskHandle }),
  );
  return ApproximateNumberOfMessagesMoved ?? 0;
}
