/**
 * `email-pipeline deliveries --outcome S [--team NAME] [--since T] [--max N] [--json]`: the keys whose
 * outcome is S, newest first, from the ledger table's index by outcome (needs dynamodb:Query on the
 * table's `by-status` index on AWS). On a pipeline with teams it also reads the listed keys' items for
 * their team (dynamodb:BatchGetItem on the table): `--team` lists one team's keys only, each shown as
 * the team wrote it; without it, each key names its team. `--status` is the old spelling of
 * `--outcome` ("status" is a key's delivery status, what `email-pipeline status <key>` prints): it
 * still works, with a warning.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deprecated, parseCommand, wholeNumber } from './args';
import type { Command, Io } from './command';
import { isOutcome, OUTCOMES, queryDeliveries, sinceTime, UNINDEXED_OUTCOMES, type Delivery } from './deliveries';
import { awsFailure, suggestion, UsageError } from './errors';
import { printable } from './printable';
import { objectOutput, TEAM_OPTION, teamOption } from './team-option';
import { output, resolveTarget, TARGET_HELP, TARGET_OPTIONS, TARGET_SYNOPSIS, targetOptions } from './target';

const USAGE = `Usage: email-pipeline deliveries --outcome S [--team NAME] [--since T] [--max N] [--json] ${TARGET_SYNOPSIS}

Lists the dedupe keys whose outcome is S, newest first: ${OUTCOMES.join(', ')} (not sent or delivered:
nearly every email has those; email-pipeline status KEY gives one key's).
--since takes an ISO date or time (2026-12-03, 2026-12-03T08:00:00Z) or an age (30m, 2h, 7d);
--max defaults to 100. Keys SES cannot carry as a tag show as sha256-<hex> (the ledger's key).
--team NAME lists only the keys a team published (through its topic), as the team wrote them; on a
pipeline with teams, each key is shown with its team. The index lags the table by about a second.
email-pipeline status [--team NAME] <key> follows one key.

${TARGET_HELP}`;

const OPTIONS = {
  outcome: { type: 'string' },
  /** The old spelling of --outcome (warns). */
  status: { type: 'string' },
  since: { type: 'string' },
  max: { type: 'string' },
  json: { type: 'boolean' },
  ...TEAM_OPTION,
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * One key as text: its time and key, a team's key as the team wrote it (the ledger's key when the
 * team's key did not fit a tag), and its team unless --team named it.
 */
export function line(delivery: Delivery, team: string | undefined): string {
  const key = printable(delivery.teamKey ?? delivery.key);
  const named = delivery.team !== undefined && team === undefined ? `  team ${printable(delivery.team)}` : '';
  return `${printable(delivery.updatedAt)}  ${key}${named}`;
}

export const deliveriesCommand: Command = {
  name: 'deliveries',
  summary: 'the keys with an outcome (sent, delivered, bounced, dead-lettered, ...)',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, USAGE, io, ['status']);
    if (!parsed) return;
    const { values, positionals } = parsed;
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, USAGE);
    if (values.status !== undefined && values.outcome !== undefined) {
      throw new UsageError('give --outcome only (--status is its old spelling)', USAGE);
    }
    if (values.status !== undefined) deprecated(io, 'deliveries --status', 'deliveries --outcome');
    const status = values.outcome ?? values.status;
    if (status === undefined) throw new UsageError(`say which outcome: --outcome ${OUTCOMES.join('|')}`, USAGE);
    if (UNINDEXED_OUTCOMES.includes(status)) {
      throw new UsageError(
        `"${status}" keys are not listed: the index files only ${OUTCOMES.join(', ')} (sent and delivered are nearly every email; email-pipeline status KEY gives one key's)`,
        USAGE,
      );
    }
    if (!isOutcome(status)) {
      throw new UsageError(`unknown outcome "${status}"${suggestion(status, OUTCOMES)}`, USAGE);
    }
    const since = values.since === undefined ? undefined : sinceTime(values.since, Date.now());
    if (values.since !== undefined && since === undefined) {
      throw new UsageError(`--since takes an ISO date or time or an age like 2h, got "${values.since}"`, USAGE);
    }
    const max = wholeNumber('max', values.max, 1, USAGE) ?? 100;
    const team = teamOption(values.team, USAGE);
    const named = targetOptions(values, USAGE);

    const target = await resolveTarget(named);
    const ledgerTableName = output(target, 'LedgerTableName');
    const teams = objectOutput(target.outputs, 'Teams');
    if (team !== undefined && teams !== undefined && !Object.hasOwn(teams, team)) {
      io.err(`Note: ${target.description} has no team ${team} now (its teams: ${Object.keys(teams).join(', ')}).`);
    }
    const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
    try {
      const found = await queryDeliveries(db, {
        ledgerTableName,
        status,
        max,
        ...(since !== undefined ? { since } : {}),
        ...(team !== undefined ? { team } : {}),
        // Keys name their teams where the pipeline has teams (one read of the listed keys).
        teams: teams !== undefined,
      }).catch((error: unknown) => {
        throw awsFailure(`Could not list the ${status} keys of ${target.description}`, error, !target.local);
      });
      for (const delivery of found) io.out(values.json ? JSON.stringify(delivery) : line(delivery, team));
      const more = found.length === max ? ` (the newest ${max}: --max for more)` : '';
      const whose = team !== undefined ? ` of team ${team}` : '';
      io.err(
        `${found.length} key(s)${whose} ${status}${since ? ` since ${since}` : ''} in ${target.description}${more}.`,
      );
    } finally {
      db.destroy();
    }
  },
};
