/**
 * `email-pipeline verify [--stack NAME [--region R]] [--timeout SECONDS] [--json]` (in this repository
 * also `npm run -s verify`, against `npm start`): proves a pipeline on the account it is deployed
 * to, each check printed with its result and, when it fails, a fix (verify.ts holds the checks).
 *
 * On AWS it needs: cloudformation:DescribeStacks on the stack; lambda:ListEventSourceMappings;
 * lambda:GetEventSourceMapping on the ledger DLQ's mapping;
 * sqs:GetQueueAttributes on the three DLQs; sns:Publish on the topic (a publisher's right); dynamodb:GetItem
 * on both tables (grantStatusLookup); cloudwatch:ListMetrics and cloudwatch:DescribeAlarms; where a
 * team has an SES tenant, ses:GetTenant on it (locally, `npm start`'s SES layer answers GetTenant).
 *
 * Exit 0 when every check passed (or was skipped where it cannot run: CloudWatch locally), 1 when
 * one failed, 2 on bad usage.
 */
import { randomBytes } from 'node:crypto';
import { CloudWatchClient, DescribeAlarmsCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CONFIGURATION_SET_DIMENSION } from '../../lambdas/kernel/names';
import { lookupDelivery } from '../../lambdas/status/lookup';
import { EmailPublisher } from '../publisher';
import { parseCommand, wholeNumber } from './args';
import type { Command, Io } from './command';
import { OperationError, UsageError } from './errors';
import { isOn } from '../dlq/ledger-redrive';
import { ledgerRedriveSwitch } from '../dlq/ledger-redrive-command';
import { readPause } from './pause';
import { pauseSwitch } from './pause-command';
import {
  output,
  resolveTarget,
  TARGET_HELP,
  TARGET_OPTIONS,
  TARGET_SYNOPSIS,
  targetOptions,
  type Target,
} from './target';
import { lookupTargetFromOutputs } from './status-report';
import { resolveAws, tenantSendingStatus } from './aws-rest';
import { callbacksOf } from './callbacks';
import { objectOutput } from './team-option';
import {
  canaryKey,
  formatResult,
  verifyPipeline,
  type DeadLetterCount,
  type TenantStatus,
  type VerifyProbes,
} from './verify';

/** SES's mailbox simulator address that is delivered (and counts toward no quota or reputation). */
export const CANARY_RECIPIENT = 'success@simulator.amazonses.com';
const DEFAULT_TIMEOUT_SECONDS = 180;

const USAGE = `Usage: email-pipeline verify ${TARGET_SYNOPSIS} [--timeout SECONDS] [--json]
       npm run -s verify -- [options]    (in this repository, against npm start)

Proves the pipeline works on the account it is deployed to, and says what to fix when it does not:
  - sending is on (every event source of the send function enabled)
  - the dead-letter queues are empty
  - the ledger DLQ's redrive mapping is off (a dlq redrive --queue ledger that was killed leaves it on:
    dlq redrive --queue ledger --stop turns it off)
  - a canary to SES's mailbox simulator (${CANARY_RECIPIENT}) is delivered, and its SES Send and
    Delivery events are trusted by the ledger (the caller identity and origin checks hold on real events)
  - the reputation metrics exist under the dimension the alarms read
  - no alarm of the pipeline is in ALARM
  - where a team has an SES tenant, SES lets each tenant send (GetTenant's SendingStatus ENABLED or
    REINSTATED; DISABLED fails: SES paused that team)
Some of these are facts AWS only shows once deployed: run it after every cdk deploy.
--timeout is how long the canary may take (default ${DEFAULT_TIMEOUT_SECONDS}). --json prints one
JSON object per check. Exit 0 all held (CloudWatch checks are skipped locally), 1 one failed.

${TARGET_HELP}`;

const OPTIONS = {
  ...TARGET_OPTIONS,
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The DLQs a pipeline has, by the name `dlq --queue` knows them. */
const DEAD_LETTER_OUTPUTS = [
  ['send', 'DeadLetterQueueUrl'],
  ['subscription', 'SubscriptionDeadLetterQueueUrl'],
  ['ledger', 'LedgerDeadLetterQueueUrl'],
] as const;

/**
 * The DLQs `verify` looks into, by name, with their URLs: the pipeline's, and the callbacks DLQ
 * where the pipeline has callbacks (`callbacks list` reads it).
 */
export function deadLetterQueues(
  outputs: Readonly<Record<string, string>>,
  description: string,
): [queue: string, url: string][] {
  const queues: [string, string][] = DEAD_LETTER_OUTPUTS.flatMap(([queue, name]) => {
    const url = outputs[name];
    return url ? [[queue, url] as [string, string]] : [];
  });
  try {
    queues.push(['callbacks', callbacksOf(outputs, description).deadLetterQueueUrl]);
  } catch {
    // No callbacks: nothing more to look into.
  }
  return queues;
}

/** The teams with an SES tenant, from the outputs' `Teams` (each one's `TenantName`), in their order. */
export function tenantsOf(outputs: Readonly<Record<string, unknown>>): { team: string; tenantName: string }[] {
  return Object.entries(objectOutput(outputs, 'Teams') ?? {}).flatMap(([team, own]) => {
    const name = (own as { TenantName?: unknown } | null)?.TenantName;
    return typeof name === 'string' ? [{ team, tenantName: name }] : [];
  });
}

/** Each tenant's sending status, one GetTenant each (SES v2: `getTenant`, aws-rest.ts tenantSendingStatus). */
export async function tenantStatuses(
  getTenant: (tenantName: string) => Promise<string | undefined>,
  tenants: readonly { readonly team: string; readonly tenantName: string }[],
): Promise<TenantStatus[]> {
  const out: TenantStatus[] = [];
  for (const { team, tenantName } of tenants) {
    const sendingStatus = await getTenant(tenantName);
    out.push({ team, tenantName, ...(sendingStatus ? { sendingStatus } : {}) });
  }
  return out;
}

/** The probes of `target`, with the clients they made (destroyed by the caller). */
function probesOf(target: Target): { probes: VerifyProbes; close: () => void } {
  const sqs = new SQSClient({ ...target.clients.sqs, useQueueUrlAsEndpoint: false });
  const db = DynamoDBDocumentClient.from(new DynamoDBClient(target.clients.dynamodb));
  const cloudWatch = target.local ? undefined : new CloudWatchClient(target.clients.sqs);
  const tables = lookupTargetFromOutputs(target.outputs, target.description);
  const monitored = target.outputs.AlarmNamePrefix;
  const tenants = tenantsOf(target.outputs);
  // Locally, the SES layer of npm start (its endpoint in the outputs) answers GetTenant.
  const sesOrigin =
    target.local && typeof target.outputs.SesEndpoint === 'string' ? target.outputs.SesEndpoint : undefined;
  const getTenant = async (tenantName: string) =>
    tenantSendingStatus(await resolveAws(target.clients.sqs), tenantName, sesOrigin);
  const probes: VerifyProbes = {
    description: target.description,
    async sendSources() {
      const state = await readPause(pauseSwitch(target));
      return state.sources.map((s) => ({ id: s.id, enabled: ['Enabled', 'Enabling'].includes(s.state) }));
    },
    async deadLetters() {
      const counts: DeadLetterCount[] = [];
      for (const [queue, url] of deadLetterQueues(target.outputs, target.description)) {
        const { Attributes = {} } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        const messages =
          Number(Attributes.ApproximateNumberOfMessages ?? 0) +
          Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
        counts.push({ queue, messages });
      }
      return counts;
    },
    ...(target.outputs[target.local ? 'LedgerRedriveFile' : 'LedgerDeadLetterMappingId']
      ? {
          async ledgerRedrive() {
            const source = ledgerRedriveSwitch(target);
            const state = await source.state();
            return { id: source.name, state, on: isOn(state) };
          },
        }
      : {}),
    async publishCanary(key) {
      const publisher = new EmailPublisher({
        topicArn: output(target, 'TopicArn'),
        sns: new SNSClient(target.clients.sns),
      });
      try {
        await publisher.publish(
          {
            to: [CANARY_RECIPIENT],
            subject: 'email-pipeline verify',
            text: `A canary from email-pipeline verify (${key}): SES's mailbox simulator accepts it.`,
            tags: { source: 'verify' },
          },
          { idempotencyKey: key },
        );
      } finally {
        publisher.destroy();
      }
    },
    report: (key) => lookupDelivery({ ...tables, db }, key),
    ...(cloudWatch
      ? {
          async reputation() {
            const { Metrics = [] } = await cloudWatch.send(
              new ListMetricsCommand({ Namespace: 'AWS/SES', MetricName: 'Reputation.BounceRate' }),
            );
            const set = target.outputs.ConfigurationSetName;
            return {
              account: Metrics.some((m) => (m.Dimensions ?? []).length === 0),
              configurationSet: Metrics.some((m) =>
                (m.Dimensions ?? []).some((d) => d.Name === CONFIGURATION_SET_DIMENSION && d.Value === set),
              ),
            };
          },
        }
      : {}),
    ...(cloudWatch && monitored
      ? {
          async alarmsFiring() {
            const names: string[] = [];
            let next: string | undefined;
            do {
              const page = await cloudWatch.send(
                new DescribeAlarmsCommand({ AlarmNamePrefix: monitored, StateValue: 'ALARM', NextToken: next }),
              );
              for (const alarm of [...(page.MetricAlarms ?? []), ...(page.CompositeAlarms ?? [])]) {
                if (alarm.AlarmName) names.push(alarm.AlarmName);
              }
              next = page.NextToken;
            } while (next);
            return names;
          },
        }
      : {}),
    ...(tenants.length > 0 ? { tenants: () => tenantStatuses(getTenant, tenants) } : {}),
    skipReason: target.local
      ? 'the local pipeline has no CloudWatch'
      : 'the stack has no EmailPipelineMonitoring for this pipeline',
  };
  return {
    probes,
    close: () => {
      sqs.destroy();
      db.destroy();
      cloudWatch?.destroy();
    },
  };
}

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'prove the pipeline on its account: a canary delivered and trusted, DLQs, mappings, metrics, alarms',
  usage: USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, USAGE);
    const timeoutSeconds = wholeNumber('timeout', values.timeout, 1, USAGE) ?? DEFAULT_TIMEOUT_SECONDS;

    const target = await resolveTarget(targetOptions(values, USAGE));
    let wiring;
    try {
      wiring = probesOf(target);
    } catch (error) {
      throw new OperationError(error instanceof Error ? error.message : String(error));
    }
    const key = canaryKey(new Date(), randomBytes(4).toString('hex'));
    if (!values.json) io.err(`Verifying ${target.description} (canary key ${key}, up to ${timeoutSeconds} s)...`);
    try {
      const results = await verifyPipeline(wiring.probes, {
        timeoutMs: timeoutSeconds * 1000,
        pollMs: target.local ? 500 : 3000,
        canaryKey: key,
        onResult: (result) => {
          if (values.json) io.out(JSON.stringify(result));
          else for (const line of formatResult(result)) io.out(line);
        },
      });
      const failed = results.filter((r) => r.status === 'fail');
      if (failed.length > 0) {
        throw new OperationError(
          `${failed.length} of ${results.length} checks failed on ${target.description}: ${failed.map((r) => r.name).join('; ')}`,
        );
      }
      if (!values.json) io.err(`All checks held on ${target.description}.`);
    } finally {
      wiring.close();
    }
  },
};
