/**
 * What the dlq subcommands share (operations.ts): their options, the selector `--code`/`--key`/`--team`
 * make and how it reads in what is printed, and what a dry run prints.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { formatDeadLetter, type DeadLetter } from './dead-letters';
import { matches, readAll, type Selector } from './select';
import type { Io } from '../cli/command';
import type { Consent } from '../cli/confirm';
import { printable } from '../cli/printable';

export const QUEUES = ['send', 'ledger', 'subscription'] as const;
export type QueueName = (typeof QUEUES)[number];

export interface DlqOptions {
  readonly queue: QueueName;
  readonly json: boolean;
  readonly summary: boolean;
  readonly force: boolean;
  /** Whole-DLQ redrive message by message instead of SQS's move task. */
  readonly copy?: boolean;
  /** How a change goes on: ask first, go ahead (--yes), or only say what it would do (--dry-run). */
  readonly mode?: Consent;
  readonly code?: string;
  /** Any of these dedupe keys (--key, repeated; with --team, already in the team's namespace). */
  readonly keys?: readonly string[];
  /** Only the dead letters of this team's keys (`<team>#...`). */
  readonly team?: string;
  readonly task?: string;
  readonly max?: number;
  readonly rate?: number;
  /** dlq redrive --queue ledger: stop after this long without the DLQ shrinking. */
  readonly stallSeconds?: number;
  /** dlq redrive --queue ledger --stop: disable the mapping a redrive left on. */
  readonly stop?: boolean;
}

export function selectorOf(options: DlqOptions): Selector | undefined {
  if (options.code === undefined && options.keys === undefined && options.team === undefined) return undefined;
  return {
    ...(options.code !== undefined ? { code: options.code } : {}),
    ...(options.keys !== undefined ? { keys: options.keys } : {}),
    ...(options.team !== undefined ? { team: options.team } : {}),
  };
}

/**
 * The messages a selector takes, as printed after "N message(s)": `with code C and key K`, `of team
 * T` (`of team T with code C`). Keys are printed as the pipeline knows them: a team's keys name
 * their team (`<team>#<key>`), so the team is said only when no key is.
 */
export function describeSelector(selector: Selector): string {
  const keys = selector.keys ?? [];
  const parts = [
    selector.code !== undefined ? `code ${printable(selector.code)}` : '',
    keys.length === 1
      ? `key ${printable(keys[0] ?? '')}`
      : keys.length > 1
        ? `key ${keys.map(printable).join(' or ')}`
        : '',
  ].filter(Boolean);
  const team = selector.team !== undefined && keys.length === 0 ? `of team ${printable(selector.team)}` : '';
  return [team, parts.length > 0 ? `with ${parts.join(' and ')}` : ''].filter(Boolean).join(' ');
}

/** The selector as JSON output gives it. */
export function selectorJson(selector: Selector | undefined): Record<string, unknown> {
  return selector
    ? {
        ...(selector.code ? { code: selector.code } : {}),
        ...(selector.keys ? { keys: selector.keys } : {}),
        ...(selector.team ? { team: selector.team } : {}),
      }
    : {};
}

/** The dead letters a selector takes now (read, nothing removed): for a dry run and the question. */
export async function selected(
  sqs: SQSClient,
  dlqUrl: string,
  selector: Selector,
): Promise<{ letters: DeadLetter[]; scanned: number }> {
  const all = await readAll(sqs, dlqUrl);
  return { letters: all.filter((l) => matches(l, selector)), scanned: all.length };
}

/** A dry run's result: the messages it would act on (text: one line each), then what it would do. */
export function dryRun(
  io: Io,
  options: DlqOptions,
  result: Record<string, unknown>,
  letters: readonly DeadLetter[],
  sentence: string,
): void {
  if (options.json) {
    io.out(JSON.stringify({ ...result, dryRun: true, ...(letters.length > 0 ? { messages: letters } : {}) }));
    return;
  }
  for (const letter of letters) io.out(formatDeadLetter(letter));
  io.out(`${sentence} Nothing was changed (--dry-run).`);
}
