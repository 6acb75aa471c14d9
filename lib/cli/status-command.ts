/**
 * `email-pipeline status [--json] [--stack NAME [--pipeline NAME]] [--region R] <key>` (in this repository also
 * `npm run -s status -- …`): what happened to a dedupe key.
 *
 * Target (target.ts): a deployed stack with --stack NAME (or EMAIL_PIPELINE_STACK), and --pipeline
 * when it holds several (tables from its outputs; region and credentials from the usual AWS
 * settings, or --region; needs dynamodb:GetItem on both), else the local pipeline (tables from
 * .local/outputs.json, or LOCAL_STATE_DIR's).
 *
 * One of the packaged CLI's commands (main.ts's COMMANDS): the package depends on the DynamoDB
 * client it reads the tables with.
 *
 * The operator CLI's convention (main.ts): exit 0 a report was printed (whatever the
 * status, `unknown` included); 1 the pipeline could not be found or read (with what to do next);
 * 2 bad usage or a key that cannot be a dedupe key (with the short usage).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keyProblem, lookupDelivery } from '../../lambdas/status/lookup';
import { parseCommand } from './args';
import type { Command, Io } from './command';
import { awsFailure, OperationError, UsageError } from './errors';
import { teamOption } from './team-option';
import { resolveTarget, TARGET_HELP, TARGET_OPTIONS, TARGET_SYNOPSIS, targetOptions } from './target';
import { formatReport, lookupTargetFromOutputs } from './status-report';

const USAGE = `Usage: email-pipeline status [--json] [--team NAME] ${TARGET_SYNOPSIS} <key>
       npm run -s status -- [--json] [--team NAME] ${TARGET_SYNOPSIS} <key>    (in this repository)

Prints the delivery status and timeline of a dedupe key (the idempotency-key attribute, or the
SNS MessageId); --json prints it as one JSON object (npm's -s keeps its header off stdout). A
command about one key takes it as its argument; only dlq selects by --key. --team NAME reads the
key a team published (through its topic): each team's keys are its own (<team>#<key>); without it,
the key of the pipeline's own topics.

${TARGET_HELP}`;

const OPTIONS = {
  json: { type: 'boolean' },
  team: { type: 'string' },
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

export const statusCommand: Command = {
  name: 'status',
  summary: 'the delivery status of a dedupe key',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    const [key, ...extra] = positionals;
    if (key === undefined) throw new UsageError('say which key, e.g. email-pipeline status order-42', USAGE);
    if (extra.length > 0) throw new UsageError(`one key at a time: unexpected argument "${extra[0] ?? ''}"`, USAGE);
    const problem = keyProblem(key);
    if (problem !== undefined) {
      throw new UsageError(`${JSON.stringify(key)} cannot be a dedupe key: it ${problem}`, USAGE);
    }
    const team = teamOption(values.team, USAGE);
    const named = targetOptions(values, USAGE);

    const target = await resolveTarget(named);
    let tables;
    try {
      tables = lookupTargetFromOutputs(target.outputs, target.description);
    } catch (error) {
      throw new OperationError(error instanceof Error ? error.message : String(error));
    }
    const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
    try {
      const report = await lookupDelivery({ ...tables, db }, key, team).catch((error: unknown) => {
        throw awsFailure(`Could not read the delivery status from ${target.description}`, error, !target.local);
      });
      io.out(values.json ? JSON.stringify(report) : formatReport(report));
    } finally {
      db.destroy();
    }
  },
};
