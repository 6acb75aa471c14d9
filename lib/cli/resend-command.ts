/**
 * `email-pipeline resend <key> --reason R`: sends a key again on purpose, inside its dedupe window,
 * once the cause of its failure is fixed (resend.ts releases it and records who, when and why in
 * its timeline). Then its dead letter, if the send DLQ holds one, is redriven; otherwise the
 * command says how to publish the same message again.
 */
import * as os from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { keyProblem, lookupKey } from '../../lambdas/status/lookup';
import { neverRedriveReason, redriveSelected } from '../dlq-select';
import { parseCommand } from './args';
import { callerArn, resolveAws } from './aws-rest';
import type { Command, Io } from './command';
import { awsFailure, OperationError, UsageError } from './errors';
import { MAX_REASON_LENGTH, NotReleasable, releaseKey } from './resend';
import { lookupTargetFromOutputs } from './status-report';
import { output, resolveTarget, type Target } from './target';

const USAGE = `Usage: email-pipeline resend <key> --reason R [--stack NAME] [--region R]

Sends a dedupe key again on purpose, after the cause of its failure was fixed (a template that
failed to render, a suppressed address taken off the list): releases the key (never while a send
holds it), records who, when and why in its timeline (email-pipeline status shows it), then
redrives its dead letter if the DLQ holds one, or says how to publish the same message again.
Without --stack it works on the local pipeline (npm start).`;

const OPTIONS = {
  reason: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Who a resend is recorded as: the caller's ARN on AWS, the local user locally. */
async function whoAsks(target: Target): Promise<string> {
  if (target.local) return `local:${os.userInfo().username}`;
  return callerArn(await resolveAws(target.clients.sqs));
}

/** Lines telling how to publish the same message again (the key must be the same). */
export function republishAdvice(key: string, stack: string | undefined): string[] {
  const where = stack ? ` --stack ${stack}` : '';
  return [
    'No dead letter of this key is in the DLQ: publish the same message again under the same key, e.g.',
    `  email-pipeline publish --idempotency-key ${JSON.stringify(key)} --to ... --subject ... --text ...${where}`,
    '(or the publisher sends it again with the idempotency-key attribute set to this key).',
  ];
}

export const resendCommand: Command = {
  name: 'resend',
  summary: 'send a key again on purpose (recorded in its timeline)',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    const [asked, ...extra] = positionals;
    if (asked === undefined) throw new UsageError('say which key: email-pipeline resend <key> --reason R', USAGE);
    if (extra.length > 0) throw new UsageError(`one key at a time: unexpected argument "${extra[0] ?? ''}"`, USAGE);
    const problem = keyProblem(asked);
    if (problem !== undefined)
      throw new UsageError(`${JSON.stringify(asked)} cannot be a dedupe key: it ${problem}`, USAGE);
    const reason = values.reason?.trim();
    if (!reason) throw new UsageError('say why: --reason "template fixed" (it goes into the key\'s timeline)', USAGE);
    if (reason.length > MAX_REASON_LENGTH) {
      throw new UsageError(`--reason is at most ${MAX_REASON_LENGTH} characters, got ${reason.length}`, USAGE);
    }
    const key = lookupKey(asked);

    const target = await resolveTarget({ stack: values.stack, region: values.region });
    let tables;
    try {
      tables = lookupTargetFromOutputs(target.outputs, target.description);
    } catch (error) {
      throw new OperationError(error instanceof Error ? error.message : String(error));
    }
    const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
    const sqs = new SQSClient({ ...target.clients.sqs, useQueueUrlAsEndpoint: false });
    try {
      const who = await whoAsks(target).catch((error: unknown) => {
        throw awsFailure('Could not tell who you are (sts:GetCallerIdentity)', error);
      });
      const at = new Date().toISOString();
      const before = await releaseKey({ db, ...tables }, { key, who, reason, at }).catch((error: unknown) => {
        if (error instanceof NotReleasable) throw new OperationError(`${key} was not released: ${error.message}`);
        throw awsFailure(`Could not release ${key} on ${target.description}`, error, !target.local);
      });
      io.out(
        `Released ${key} on ${target.description}${before === 'completed' ? ' (its completed send record deleted)' : ''}; ` +
          `recorded as Resend at ${at} by ${who}: ${reason}`,
      );
      const { moved, skipped } = await redriveSelected(sqs, {
        dlqUrl: output(target, 'DeadLetterQueueUrl'),
        sourceQueueUrl: output(target, 'QueueUrl'),
        selector: { key },
        skip: (letter) => neverRedriveReason(letter.errorCode) !== undefined,
      }).catch((error: unknown) => {
        throw awsFailure(`Released ${key}, but could not look for its dead letter`, error, !target.local);
      });
      if (moved > 0) {
        io.out(
          `Redrove ${moved} dead letter(s) of ${key}: it is sent again (email-pipeline status ${key} follows it).`,
        );
        return;
      }
      if (skipped > 0) {
        io.err(
          `The DLQ holds ${skipped} message(s) of ${key} whose code a redrive cannot fix (dlq list --key shows why): not redriven.`,
        );
      }
      for (const line of republishAdvice(key, values.stack)) io.out(line);
    } finally {
      db.destroy();
      sqs.destroy();
    }
  },
};
