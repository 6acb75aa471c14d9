/**
 * `email-pipeline callbacks` without the process around it: where a pipeline's callbacks are (the
 * `Callbacks` of its outputs), which callback `--team` names (`*`, the pipeline's own, without it),
 * the ledger key `--key` names, what a message of the callbacks DLQ says (key, team, status, webhook
 * id when it is a replay, reason, first try), a stored callback of the callbacks table as a row, the
 * days `--since` spans and the replay messages. Pure: the command is callbacks-command.ts, what talks
 * to SQS and DynamoDB callback-store.ts. Names and shapes: lambdas/kernel/callbacks/names.ts.
 */
import type { Message, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import {
  CALLBACK_ATTRIBUTE,
  CALLBACK_ITEM,
  CALLBACK_RETENTION_SECONDS,
  CALLBACK_STATE_KEY_PREFIX,
  CALLBACKS_QUEUE,
  CALLBACKS_TABLE,
  PIPELINE_TARGET,
  type ReplayRequest,
} from '../../lambdas/kernel/callbacks/names';
import { webhookId, type PublishedReport } from '../../lambdas/kernel/callbacks/webhook';
import { IDEMPOTENCY_KEY_ATTRIBUTE, normalizeIdempotencyKey } from '../../lambdas/kernel/contract/index';
import { ledgerKey } from '../../lambdas/kernel/ledger/schema';
import { formatAge } from '../dlq/dead-letters';
import { OperationError } from './errors';
import { printable } from './printable';
import { keyOfTeam, objectOutput, teamTopicsOf } from './team-option';

/** Where a pipeline's callbacks are: its outputs' `Callbacks`. */
export interface CallbackOutputs {
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly tableName: string;
}

/** How to configure callbacks, said when a pipeline has none (or not the one asked for). */
const CONFIGURE =
  "set callbackUrl (the pipeline's own callback) or teams.<name>.callbackUrl (a team's) in its settings " +
  '(cdk.json context "emailPipeline:callbackUrl", or the construct props) and deploy it again; locally, restart npm start';

const text = (object: Record<string, unknown>, name: string): string | undefined =>
  typeof object[name] === 'string' && object[name] !== '' ? object[name] : undefined;

/** The callbacks of a pipeline's outputs; throws OperationError saying how to configure them when it has none. */
export function callbacksOf(outputs: Readonly<Record<string, unknown>>, where: string): CallbackOutputs {
  const callbacks =
    objectOutput(outputs, 'Callbacks') ?? objectOutput(objectOutput(outputs, 'Endpoints') ?? {}, 'Callbacks');
  const queueUrl = callbacks && text(callbacks, 'QueueUrl');
  const deadLetterQueueUrl = callbacks && text(callbacks, 'DeadLetterQueueUrl');
  const tableName = callbacks && text(callbacks, 'TableName');
  if (!queueUrl || !deadLetterQueueUrl || !tableName) {
    throw new OperationError(
      `${where} has no callbacks (its outputs name no Callbacks queue and table): none is configured, or it was ` +
        `deployed before callbacks existed. To have them, ${CONFIGURE}.`,
    );
  }
  return { queueUrl, deadLetterQueueUrl, tableName };
}

/** Whether the pipeline itself (no team) has a callback: its signing secret is in the outputs. */
function ownCallback(outputs: Readonly<Record<string, unknown>>): boolean {
  const callbacks = objectOutput(outputs, 'Callbacks') ?? {};
  return text(callbacks, 'SigningSecretArn') !== undefined || typeof outputs.CallbackSigningSecret === 'string';
}

/** The teams of the outputs that have a callback (a signing secret of their own). */
export function teamsWithCallbacks(outputs: Readonly<Record<string, unknown>>): string[] {
  const teams = objectOutput(outputs, 'Teams') ?? {};
  return Object.entries(teams)
    .filter(([, own]) => {
      const record = (typeof own === 'object' && own !== null ? own : {}) as Record<string, unknown>;
      return (
        text(record, 'CallbackSigningSecretArn') !== undefined || text(record, 'CallbackSigningSecret') !== undefined
      );
    })
    .map(([name]) => name)
    .sort();
}

/**
 * Checks that `team` (a team's callback) or, without it, the pipeline's own callback is configured
 * in `outputs`; throws OperationError listing the teams there are, or those with a callback.
 */
export function checkCallbackTarget(
  outputs: Readonly<Record<string, unknown>>,
  team: string | undefined,
  where: string,
): void {
  const withCallbacks = teamsWithCallbacks(outputs);
  const listed = withCallbacks.length > 0 ? `the teams with one are ${withCallbacks.join(', ')}` : 'no team has one';
  if (team === undefined) {
    if (ownCallback(outputs) || withCallbacks.length === 0) return;
    throw new OperationError(
      `${where} has no callback of its own (callbackUrl): ${listed}; name one with --team NAME.`,
    );
  }
  teamTopicsOf(outputs, team, where);
  if (!withCallbacks.includes(team)) {
    throw new OperationError(`Team ${team} of ${where} has no callback (teams.${team}.callbackUrl); ${listed}.`);
  }
}

/** The callback target of `--team` (its key in the callbacks' settings and state items). */
export const targetOf = (team: string | undefined): string => team ?? PIPELINE_TARGET;

/** The callbacks table's key of the state item of a callback target (`callback-state#<team or *>`, `state`). */
export function stateItemKey(team: string | undefined): Record<string, string> {
  return {
    [CALLBACKS_TABLE.partitionKey]: `${CALLBACK_STATE_KEY_PREFIX}${targetOf(team)}`,
    [CALLBACKS_TABLE.sortKey]: 'state',
  };
}

/** The ledger key (the callbacks table's partition) of `key` as `team` (or the pipeline) published it. */
export function callbackKey(team: string | undefined, key: string): string {
  return ledgerKey(keyOfTeam(team, normalizeIdempotencyKey(key)));
}

/** One message of the callbacks DLQ as an operator sees it. */
export interface CallbackLetter {
  readonly messageId: string;
  /** The ledger key (a team's keys are hashed: `sha256-…`). */
  readonly key?: string;
  /** The team, absent for the pipeline's own keys (and unknown for a replay without it). */
  readonly team?: string;
  readonly status?: string;
  /** The webhook id, known for a replay (its body names it). */
  readonly id?: string;
  /** The replay run it came from. */
  readonly replay?: string;
  readonly reason: string;
  /** When the callback was first tried (ISO), when the function said. */
  readonly firstTry?: string;
  readonly ageSeconds: number;
  readonly receiveCount: number;
}

const attribute = (message: Message, name: string): string | undefined =>
  message.MessageAttributes?.[name]?.StringValue;

/** The key, id, team and status a body names: a replay request's, or a status change's DeliveryReport. */
function peek(body: string): { key?: string; id?: string; team?: string; status?: string } {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const replay = (parsed as Partial<ReplayRequest>).replayOf as Record<string, unknown> | undefined;
    const from = typeof replay === 'object' && replay !== null ? replay : parsed;
    const pick = (object: Record<string, unknown>, name: string) =>
      typeof object[name] === 'string' ? { [name]: object[name] } : {};
    // A status change's webhook-id is its report's (the function's own rule); a replay names it.
    const report = parsed as Partial<PublishedReport>;
    const id =
      from !== replay &&
      typeof report.key === 'string' &&
      typeof report.status === 'string' &&
      Array.isArray(report.events)
        ? { id: webhookId(report as PublishedReport) }
        : {};
    return {
      ...pick(from, 'key'),
      ...(from === replay ? pick(from, 'id') : id),
      ...pick(parsed, 'team'),
      ...pick(parsed, 'status'),
    };
  } catch {
    return {};
  }
}

/** Reads what a callbacks DLQ message says: its key, team, status, why it is there, since when. */
export function describeCallbackLetter(message: Message, now = Date.now()): CallbackLetter {
  const body = peek(message.Body ?? '');
  const key = attribute(message, IDEMPOTENCY_KEY_ATTRIBUTE) ?? body.key;
  const team = attribute(message, 'team') ?? body.team;
  const status = attribute(message, 'status') ?? body.status;
  const replay = attribute(message, CALLBACK_ATTRIBUTE.replay);
  const firstTry = attribute(message, CALLBACK_ATTRIBUTE.firstTry);
  const since = firstTry !== undefined ? Date.parse(firstTry) : Number(message.Attributes?.SentTimestamp ?? now);
  return {
    messageId: message.MessageId ?? '',
    ...(key !== undefined ? { key } : {}),
    ...(team !== undefined ? { team } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(body.id !== undefined ? { id: body.id } : {}),
    ...(replay !== undefined ? { replay } : {}),
    reason:
      attribute(message, CALLBACK_ATTRIBUTE.failure) ??
      `moved by the redrive policy after ${CALLBACKS_QUEUE.maxReceiveCount} receives (the function died on it): see the callback function's logs`,
    ...(firstTry !== undefined ? { firstTry } : {}),
    ageSeconds: Number.isFinite(since) ? Math.max(0, Math.round((now - since) / 1000)) : 0,
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
  };
}

/** Which dead letters a command takes: any of `keys` (ledger keys), of `team`. */
export interface CallbackSelector {
  readonly keys?: readonly string[];
  readonly team?: string;
}

export function selects(letter: CallbackLetter, selector: CallbackSelector): boolean {
  if (selector.team !== undefined && letter.team !== selector.team) return false;
  return selector.keys === undefined || (letter.key !== undefined && selector.keys.includes(letter.key));
}

/** One line per dead letter: age, status, key, team, webhook id, receives, reason (each part printable). */
export function formatCallbackLetter(letter: CallbackLetter): string {
  return [
    formatAge(letter.ageSeconds).padStart(4),
    printable(letter.status ?? '-').padEnd(13),
    `key=${printable(letter.key ?? '-')}`,
    `team=${printable(letter.team ?? '-')}`,
    ...(letter.id !== undefined ? [`id=${printable(letter.id)}`] : []),
    ...(letter.replay !== undefined ? [`replay=${printable(letter.replay)}`] : []),
    `first-try=${printable(letter.firstTry ?? '-')}`,
    `receives=${letter.receiveCount}`,
    printable(letter.reason),
  ].join('  ');
}

/** One stored callback (an item of the callbacks table) as `list --history` and `replay` show it. */
export interface CallbackRow {
  readonly key: string;
  readonly id: string;
  readonly team?: string;
  readonly status?: string;
  readonly at?: string;
  /** `delivered`, `failed`, or `retrying` while neither. */
  readonly state: string;
  readonly attempts?: number;
  readonly lastResult?: string;
  readonly deliveredAt?: string;
}

/** An item of the callbacks table as a row (an index item, KEYS_ONLY, has only its keys and `at`). */
export function callbackRow(item: Readonly<Record<string, unknown>>): CallbackRow {
  const field = (name: string): string | undefined => (typeof item[name] === 'string' ? item[name] : undefined);
  const team = field(CALLBACK_ITEM.team);
  const status = field(CALLBACK_ITEM.status);
  const at = field(CALLBACK_ITEM.at);
  const lastResult = field(CALLBACK_ITEM.lastResult);
  const deliveredAt = field(CALLBACK_ITEM.deliveredAt);
  const attempts = item[CALLBACK_ITEM.attempts];
  return {
    key: field(CALLBACKS_TABLE.partitionKey) ?? '',
    id: field(CALLBACKS_TABLE.sortKey) ?? '',
    ...(team !== undefined && team !== PIPELINE_TARGET ? { team } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(at !== undefined ? { at } : {}),
    state: field(CALLBACK_ITEM.state) ?? (item[CALLBACK_ITEM.body] !== undefined ? 'retrying' : '-'),
    ...(typeof attempts === 'number' ? { attempts } : {}),
    ...(lastResult !== undefined ? { lastResult } : {}),
    ...(deliveredAt !== undefined ? { deliveredAt } : {}),
  };
}

/** One line per stored callback: time of the change, status, state, tries, last result, delivered at, id. */
export function formatCallbackRow(row: CallbackRow): string {
  return [
    printable(row.at ?? '-').padEnd(24),
    printable(row.status ?? '-').padEnd(13),
    printable(row.state).padEnd(9),
    `attempts=${row.attempts ?? '-'}`,
    `last=${printable(row.lastResult ?? '-')}`,
    `delivered-at=${printable(row.deliveredAt ?? '-')}`,
    `id=${printable(row.id)}`,
    ...(row.team !== undefined ? [`team=${printable(row.team)}`] : []),
    `key=${printable(row.key)}`,
  ].join('  ');
}

/**
 * The days (YYYY-MM-DD, UTC) from `since`'s to `now`'s, oldest first: the `by-day` index's
 * partitions to query. None before the items' retention (they have expired).
 */
export function daysSince(since: string, now: number): string[] {
  const oldest = now - (CALLBACK_RETENTION_SECONDS + 86_400) * 1000;
  const start = Math.max(Date.parse(since), oldest);
  const days: string[] = [];
  for (let day = Date.parse(new Date(start).toISOString().slice(0, 10)); day <= now; day += 86_400_000) {
    days.push(new Date(day).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * The replay messages of `rows`, ten to a batch (SendMessageBatch): each body a ReplayRequest,
 * each with the run's `replayId` (the function POSTs a stored callback once per replay id) and the
 * team of a team's callback.
 */
export function replayBatches(rows: readonly CallbackRow[], replayId: string): SendMessageBatchRequestEntry[][] {
  const entries = rows.map((row, i): SendMessageBatchRequestEntry => {
    const request: ReplayRequest = { replayOf: { key: row.key, id: row.id } };
    return {
      Id: String(i),
      MessageBody: JSON.stringify(request),
      MessageAttributes: {
        [CALLBACK_ATTRIBUTE.replay]: { DataType: 'String', StringValue: replayId },
        ...(row.team !== undefined ? { team: { DataType: 'String', StringValue: row.team } } : {}),
      },
    };
  });
  const batches: SendMessageBatchRequestEntry[][] = [];
  for (let i = 0; i < entries.length; i += 10) batches.push(entries.slice(i, i + 10));
  return batches;
}
