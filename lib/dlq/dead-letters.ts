/**
 * Operator tools for the dead-letter queue: list, redrive, purge. They take
 * their SQS client as a parameter and work the same against a deployed stack
 * and the local emulator (which lacks the native message move task). The rest
 * of the DLQ tooling sits beside: select.ts (by code or key), the CLI's `dlq`
 * command (command.ts, operations.ts, options.ts) and the ledger DLQ's redrive
 * (ledger-redrive.ts, ledger-redrive-command.ts).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DLQ_ATTRIBUTE, RETRY_ATTRIBUTE } from '../../lambdas/kernel/names';
import { IDEMPOTENCY_KEY_ATTRIBUTE, maskAddress } from '../../lambdas/kernel/contract/index';
import { DEDUPE_KEY_TAG } from '../../lambdas/kernel/ledger/schema';
import { printable } from '../cli/printable';

/** One DLQ message as an operator sees it. */
export interface DeadLetter {
  readonly messageId: string;
  readonly ageSeconds: number;
  readonly errorClass: string;
  readonly errorCode: string;
  readonly reason: string;
  readonly dedupeKey?: string;
  readonly recipient?: string;
}

// A redriven message starts a fresh retry budget: the retry attributes stay behind too.
const OUR_ATTRIBUTES = new Set<string>([...Object.values(DLQ_ATTRIBUTE), ...Object.values(RETRY_ATTRIBUTE)]);

function attribute(message: Message, name: string): string | undefined {
  return message.MessageAttributes?.[name]?.StringValue;
}

/** Best-effort look inside the body for the key and first recipient (bodies may be anything). */
function peekBody(body: string): { key?: string; recipient?: string } {
  try {
    const outer = JSON.parse(body) as Record<string, unknown>;
    const isEnvelope = outer.Type === 'Notification' && typeof outer.Message === 'string';
    const inner = (isEnvelope ? JSON.parse(outer.Message as string) : outer) as Record<string, unknown>;
    const attributes = outer.MessageAttributes as Record<string, { Value?: string }> | undefined;
    // An SES event (the ledger's DLQ): its dedupe-key tag.
    const mail = inner.mail as { tags?: Record<string, unknown> } | undefined;
    const tagged = mail?.tags?.[DEDUPE_KEY_TAG];
    const sesKey = Array.isArray(tagged) && typeof tagged[0] === 'string' ? tagged[0] : undefined;
    const key =
      sesKey ??
      attributes?.[IDEMPOTENCY_KEY_ATTRIBUTE]?.Value ??
      (isEnvelope ? (outer.MessageId as string) : undefined);
    const to = Array.isArray(inner.to) ? inner.to[0] : inner.to;
    return {
      ...(typeof key === 'string' ? { key } : {}),
      ...(typeof to === 'string' ? { recipient: to } : {}),
    };
  } catch {
    return {};
  }
}

/** Reads what a DLQ message says about why it is there. */
export function describeDeadLetter(message: Message, now = Date.now()): DeadLetter {
  const failedAt = attribute(message, DLQ_ATTRIBUTE.failedAt);
  const sent = Number(message.Attributes?.SentTimestamp ?? now);
  const since = failedAt ? Date.parse(failedAt) : sent;
  const peek = peekBody(message.Body ?? '');
  const dedupeKey = attribute(message, DLQ_ATTRIBUTE.dedupeKey) ?? peek.key;
  const ours = attribute(message, DLQ_ATTRIBUTE.errorClass) !== undefined;
  return {
    messageId: message.MessageId ?? '',
    ageSeconds: Math.max(0, Math.round((now - since) / 1000)),
    errorClass: attribute(message, DLQ_ATTRIBUTE.errorClass) ?? 'retries exhausted',
    errorCode: attribute(message, DLQ_ATTRIBUTE.errorCode) ?? 'MaxReceiveCountExceeded',
    reason: ours
      ? (attribute(message, DLQ_ATTRIBUTE.reason) ?? '')
      : 'moved by the redrive policy after maxReceiveCount receives; see the function logs for its retries',
    ...(dedupeKey !== undefined ? { dedupeKey } : {}),
    ...(peek.recipient !== undefined ? { recipient: maskAddress(peek.recipient) } : {}),
  };
}

/** An age as a line shows it: `45s`, `12m`, `5h`, `3d`. */
export function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/**
 * One line per message: age, class/code, key, masked recipient, reason. Every part that came with the
 * message (all but the age) is {@link printable}: a key or reason cannot break the line or reach the terminal raw.
 */
export function formatDeadLetter(letter: DeadLetter): string {
  return [
    formatAge(letter.ageSeconds).padStart(4),
    printable(letter.errorCode).padEnd(28),
    `key=${printable(letter.dedupeKey ?? '-')}`,
    `to=${printable(letter.recipient ?? '-')}`,
    printable(letter.reason),
  ].join('  ');
}

/**
 * Lists up to `max` messages without removing them: each is hidden while the
 * listing runs (so none is shown twice) and made visible again at the end.
 */
export async function listDeadLetters(sqs: SQSClient, dlqUrl: string, max = 100): Promise<DeadLetter[]> {
  const held: Message[] = [];
  try {
    while (held.length < max) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: Math.min(10, max - held.length),
          VisibilityTimeout: 30,
          WaitTimeSeconds: held.length === 0 ? 1 : 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      if (Messages.length === 0) break;
      held.push(...Messages);
    }
    return held.map((m) => describeDeadLetter(m));
  } finally {
    for (let i = 0; i < held.length; i += 10) {
      const chunk = held.slice(i, i + 10);
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: dlqUrl,
          Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '', VisibilityTimeout: 0 })),
        }),
      );
    }
  }
}

/**
 * The message attributes to carry back to the source queue: the publisher's, not our diagnosis
 * (`dropped`: the send DLQ's diagnosis and retry attributes unless told otherwise).
 */
export function attributesForRedrive(
  message: Message,
  dropped: ReadonlySet<string> = OUR_ATTRIBUTES,
): Record<string, MessageAttributeValue> | undefined {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (!dropped.has(name)) out[name] = value;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Sends a received DLQ message back to `sourceQueueUrl` (its body, its attributes but `dropped`)
 * and only then deletes it from `dlqUrl`: a failure in between leaves a copy in both, never in neither.
 */
export async function moveBack(
  sqs: SQSClient,
  message: Message,
  queues: { readonly dlqUrl: string; readonly sourceQueueUrl: string },
  dropped?: ReadonlySet<string>,
): Promise<void> {
  const attributes = attributesForRedrive(message, dropped);
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queues.sourceQueueUrl,
      MessageBody: message.Body ?? '',
      ...(attributes ? { MessageAttributes: attributes } : {}),
    }),
  );
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queues.dlqUrl, ReceiptHandle: message.ReceiptHandle ?? '' }));
}

export interface RedriveResult {
  readonly moved: number;
  /** `native` on AWS (StartMessageMoveTask), `copy` where that API is missing. */
  readonly mode: 'native' | 'copy';
  readonly taskHandle?: string;
}

export interface RedriveOptions {
  readonly dlqUrl: string;
  readonly dlqArn: string;
  readonly sourceQueueUrl: string;
  readonly sourceQueueArn: string;
  /** At most this many messages. @default all */
  readonly max?: number;
  /** Copy message by message instead of the native move task (the local emulator has none). @default false */
  readonly copyOnly?: boolean;
  /** The native task's MaxNumberOfMessagesPerSecond (1 to 500). @default SQS's (up to 500) */
  readonly ratePerSecond?: number;
}

/**
 * Moves messages from the DLQ back to the source queue. On AWS this starts the
 * native message move task; with `copyOnly` (the local emulator has no such
 * task) it receives, sends to the source queue and only then deletes: a failure in between leaves a
 * copy in both queues (the pipeline's dedupe absorbs it), never in neither.
 */
export async function redrive(sqs: SQSClient, options: RedriveOptions): Promise<RedriveResult> {
  // The native task moves everything (it has a rate, not a count): a --max uses the copy.
  if (!options.copyOnly && options.max === undefined) {
    const task = await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: options.dlqArn,
        DestinationArn: options.sourceQueueArn,
        ...(options.ratePerSecond !== undefined
          ? { MaxNumberOfMessagesPerSecond: Math.max(1, Math.min(500, options.ratePerSecond)) }
          : {}),
      }),
    );
    return { moved: -1, mode: 'native', ...(task.TaskHandle ? { taskHandle: task.TaskHandle } : {}) };
  }
  const max = options.max ?? Number.POSITIVE_INFINITY;
  let moved = 0;
  while (moved < max) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.dlqUrl,
        MaxNumberOfMessages: Math.min(10, max - moved),
        VisibilityTimeout: 60,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) break;
    for (const message of Messages) {
      await moveBack(sqs, message, options);
      moved += 1;
    }
  }
  return { moved, mode: 'copy' };
}

/** Deletes every message in the DLQ. The CLI asks for an explicit confirmation first. */
export async function purge(sqs: SQSClient, dlqUrl: string): Promise<void> {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
}
