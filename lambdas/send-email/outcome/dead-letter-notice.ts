/**
 * A callback of a key the send function dead-letters: the ledger records SES's events only, and
 * no SES event comes of a message that was never sent, so the send function tells the callbacks
 * queue itself (a report of status `dead-lettered`, the error code as its detail), when the key's
 * team (or the pipeline, `*`) has a callback. Best effort beside the DLQ entry, which is what
 * keeps the message: a notice that cannot be sent is logged, not retried.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import { CALLBACK_ENV, PIPELINE_TARGET } from '../../kernel/callbacks/names';
import { deadLetterReport } from '../../kernel/callbacks/webhook';
import { EnvReader, type Env } from '../../kernel/environment';
import { fitsTag } from '../../kernel/ledger/binding';
import { ledgerKey } from '../../kernel/ledger/schema';
import { teamOfKey } from '../../kernel/teams';
import type { QueueClient } from './queue-record';

/** Where the notices go, and who has a callback. */
export interface NoticeSettings {
  readonly queueUrl: string;
  readonly targets: readonly string[];
}

/** The send function's notice settings, or undefined without callbacks. */
export function readNoticeSettings(env: Env = process.env): NoticeSettings | undefined {
  const read = new EnvReader(env);
  const queueUrl = read.optional(CALLBACK_ENV.queueUrl);
  const names = read.optional(CALLBACK_ENV.targetNames);
  if (queueUrl === undefined || names === undefined) return undefined;
  return { queueUrl, targets: names.split(',').filter((name) => name !== '') };
}

/** Tells `dedupeKey`'s callback it was dead-lettered with `code` (at the ledger item's `sequence`). */
export type DeadLetterNotice = (dedupeKey: string, code: string, at: string, sequence: number) => Promise<void>;

export function createDeadLetterNotice(deps: {
  readonly settings: NoticeSettings;
  readonly sqs: QueueClient;
  /** The pipeline's team names (a team's key is `<team>#<key>`). */
  readonly teamNames?: readonly string[];
  readonly logger: Pick<Logger, 'warn'>;
}): DeadLetterNotice {
  const { settings, sqs, logger } = deps;
  return async (dedupeKey, code, at, sequence) => {
    const team = teamOfKey(deps.teamNames, dedupeKey);
    if (!settings.targets.includes(team ?? PIPELINE_TARGET)) return;
    const own = team !== undefined ? dedupeKey.slice(team.length + 1) : undefined;
    const report = deadLetterReport(
      ledgerKey(dedupeKey),
      team !== undefined ? { name: team, ...(own !== undefined && fitsTag(own) ? { key: own } : {}) } : undefined,
      at,
      code,
      sequence,
    );
    const string = (value: string) => ({ DataType: 'String', StringValue: value });
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: settings.queueUrl,
          MessageBody: JSON.stringify(report),
          MessageAttributes: {
            status: string(report.status),
            'idempotency-key': string(report.key),
            ...(team !== undefined ? { team: string(team) } : {}),
          },
        }),
      );
    } catch (error) {
      logger.warn('could not tell the callback of a dead letter', {
        dedupeKey,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };
}
