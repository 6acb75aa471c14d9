/**
 * Saved CloudWatch Logs Insights queries over the pipeline's log groups (send, ledger, status, and
 * the callback function's in the key's story when callbacks are configured), on the fields the
 * functions log: the send function's one line per decision (lambdas/send-email/outcome/report.ts:
 * `decision`, `dedupeKey`, `errorClass`, `errorCode`, `reason`, ...), its WARN line for each
 * unconfirmed resend (lambdas/send-email/confirm.ts), and the ledger's line per recorded event
 * (lambdas/ledger/ledger.ts: `dedupeKey`, `eventType`, `status`, `sesMessageId`, and `team` for a
 * team's key). With teams, two more count outcomes and dead letters by team: no metric per team
 * (CloudWatch bills each team × outcome series), a query over the lines already logged.
 */
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { EmailPipeline } from '../email-pipeline';

/** What to replace in the key query: a dedupe key, or a request id from the slowest-invocations query. */
export const KEY_PLACEHOLDER = 'REPLACE-WITH-KEY';

/** The saved queries, by what they answer. */
export interface PipelineQueries {
  readonly keyStory: logs.QueryDefinition;
  readonly outcomesByReason: logs.QueryDefinition;
  readonly unconfirmedResends: logs.QueryDefinition;
  readonly slowestSends: logs.QueryDefinition;
  /** With teams only: each team's SES outcomes (ledger) and dead letters (send function). */
  readonly outcomesByTeam?: logs.QueryDefinition;
  readonly deadLettersByTeam?: logs.QueryDefinition;
}

/** The Logs Insights query of each team's SES outcomes: events recorded by the ledger, by team and type. */
export const OUTCOMES_BY_TEAM_QUERY: logs.QueryStringProps = {
  filterStatements: ['message = "ledger event recorded" and ispresent(team)'],
  statsStatements: ['count(*) as events by team, eventType'],
  sort: 'team asc',
};

/** A team's dedupe key is `<team>#<key>`: the send function's dead letters by team and reason. */
export const DEAD_LETTERS_BY_TEAM_QUERY: logs.QueryStringProps = {
  parseStatements: ['dedupeKey /^(?<team>[a-z][a-z0-9-]{0,31})#/'],
  filterStatements: ['decision = "dead-lettered" and ispresent(team)'],
  statsStatements: ['count(*) as letters by team, errorCode'],
  sort: 'letters desc',
};

/** The query definitions, in `scope`, in a folder named `folder` of the Logs Insights console. */
export function createQueries(scope: Construct, pipeline: EmailPipeline, folder: string): PipelineQueries {
  const names = pipeline.logGroupNames;
  const group = (id: string, name: string) => logs.LogGroup.fromLogGroupName(scope, id, name);
  const send = group('SendLogGroupRef', names.send);
  const ledger = group('LedgerLogGroupRef', names.ledger);
  const status = group('StatusLogGroupRef', names.status);

  // With callbacks, the callback function's tries of the key too (its lines name the ledger key).
  const callbacks = names.callbacks !== undefined ? group('CallbacksLogGroupRef', names.callbacks) : undefined;
  const keyStory = new logs.QueryDefinition(scope, 'KeyStoryQuery', {
    queryDefinitionName: `${folder}/One key's story (send, ledger, status${callbacks ? ', callbacks' : ''})`,
    logGroups: [send, ledger, status, ...(callbacks ? [callbacks] : [])],
    queryString: new logs.QueryString({
      fields: [
        '@timestamp',
        '@log',
        'level',
        'message',
        'decision',
        'errorClass',
        'errorCode',
        'reason',
        'attempt',
        'retryInSeconds',
        'eventType',
        'status',
        'sesMessageId',
        'receiveCount',
        '@requestId',
        'function_request_id',
      ],
      // The exact key on the send and ledger lines; the substring for every other line that names it
      // (REPORT lines by request id, the status function's errors).
      filterStatements: [`dedupeKey = "${KEY_PLACEHOLDER}" or @message like "${KEY_PLACEHOLDER}"`],
      sort: '@timestamp asc',
      limit: 1000,
    }),
  });

  const outcomesByReason = new logs.QueryDefinition(scope, 'OutcomesByReasonQuery', {
    queryDefinitionName: `${folder}/Outcomes by decision and reason`,
    logGroups: [send],
    queryString: new logs.QueryString({
      filterStatements: ['ispresent(decision)'],
      statsStatements: ['count(*) as records by decision, errorClass, errorCode'],
      sort: 'records desc',
    }),
  });

  const unconfirmedResends = new logs.QueryDefinition(scope, 'UnconfirmedResendsQuery', {
    queryDefinitionName: `${folder}/Unconfirmed resends (possible duplicates)`,
    logGroups: [send],
    queryString: new logs.QueryString({
      fields: ['@timestamp', 'dedupeKey', 'ledgerKey', 'attemptAt', 'graceSeconds', 'function_request_id'],
      filterStatements: ['message like "no SES event for an earlier attempt"'],
      sort: '@timestamp desc',
      limit: 1000,
    }),
  });

  const slowestSends = new logs.QueryDefinition(scope, 'SlowestSendsQuery', {
    queryDefinitionName: `${folder}/Slowest send invocations`,
    logGroups: [send],
    queryString: new logs.QueryString({
      fields: ['@timestamp', '@requestId', '@duration', '@billedDuration', '@maxMemoryUsed', '@initDuration'],
      filterStatements: ['@type = "REPORT"'],
      sort: '@duration desc',
      limit: 25,
    }),
  });

  if (pipeline.settings.teams === undefined) return { keyStory, outcomesByReason, unconfirmedResends, slowestSends };
  const outcomesByTeam = new logs.QueryDefinition(scope, 'OutcomesByTeamQuery', {
    queryDefinitionName: `${folder}/Outcomes by team (sent, delivered, bounced, complained)`,
    logGroups: [ledger],
    queryString: new logs.QueryString({ ...OUTCOMES_BY_TEAM_QUERY }),
  });
  const deadLettersByTeam = new logs.QueryDefinition(scope, 'DeadLettersByTeamQuery', {
    queryDefinitionName: `${folder}/Dead letters by team and reason`,
    logGroups: [send],
    queryString: new logs.QueryString({ ...DEAD_LETTERS_BY_TEAM_QUERY }),
  });
  return { keyStory, outcomesByReason, unconfirmedResends, slowestSends, outcomesByTeam, deadLettersByTeam };
}
