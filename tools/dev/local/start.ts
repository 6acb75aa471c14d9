/**
 * `npm start`: the whole pipeline on this machine. DynamoDB Local, an SNS/SQS
 * emulator and an SES v2 emulator on fixed ports, the resources created from
 * cdk.json's settings, and consumer processes running the handler bundle.
 *
 * Environment: DYNAMODB_PORT (8000), SQS_PORT (4566, SNS and SQS), SES_PORT (8005),
 * LOCAL_CONSUMERS (2), LOCAL_STATE_DIR (.local: the PID file and outputs.json),
 * STATUS_PORT (8010: GET /deliveries/{key}, and each team's own URLs under /teams/<name>), SES_MAX_SEND_RATE (14: the local SES answers 429
 * TooManyRequestsException beyond this many recipients a second),
 * LOCAL_RAW_LOGS (1: print the function's structured JSON log lines as well as one line per decision).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  checkJava,
  defaultPorts,
  ensureDynamoDbLocal,
  startEmulators,
  type Emulators,
  type EmulatorPorts,
} from './emulators';
import { acceptNoArguments } from './arguments';
import { formatDecision } from './format';
import { LocalPipeline } from './pipeline';
import { LOCAL_CANCELLER, startStatusEndpoint, statusPort, type StatusEndpoint } from './status-endpoint';
import { cancelDelivery } from '../../../lambdas/status/cancel';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { lookupDelivery } from '../../../lambdas/status/lookup';
import { sesAccountRateFromEnv } from './ses-rate-limit';
import { loadLocalSettings } from './settings';
import { teamConcurrency } from '../../../lib/settings';
import { LEDGER_REDRIVE_FILE, OUTPUTS_FILE, PAUSE_FILE, PID_FILE, STATE_DIR, localOutputs } from './state';

export const LOCAL_NAME = 'email-pipeline';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Refuses a second start while one runs; takes over a stale PID file. */
function claimPidFile(): void {
  mkdirSync(STATE_DIR, { recursive: true });
  if (existsSync(PID_FILE)) {
    const pid = Number(readFileSync(PID_FILE, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      console.error(
        `The local pipeline is already running (pid ${pid}). Its endpoints are in ${path.relative(process.cwd(), OUTPUTS_FILE)}.\n` +
          `Stop it with Ctrl-C in its terminal (or: kill ${pid}) before starting another.`,
      );
      process.exit(1);
    }
  }
  writeFileSync(PID_FILE, String(process.pid));
}

function consumersWanted(): number {
  const raw = process.env.LOCAL_CONSUMERS ?? '2';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 10)
    throw new Error(`LOCAL_CONSUMERS=${raw}: must be a whole number from 1 to 10`);
  return n;
}

/** Every setting npm start reads, checked before anything starts: a bad one is a usage error (exit 2). */
function readConfiguration() {
  try {
    return {
      settings: loadLocalSettings(),
      consumers: consumersWanted(),
      sesAccountRate: sesAccountRateFromEnv(),
      ports: defaultPorts(),
      statusPort: statusPort(),
    };
  } catch (error) {
    console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`);
    console.error(
      'Nothing was started. Fix the setting above (cdk.json context or the environment variable) and try again.',
    );
    process.exit(2);
  }
}

/** The environment variable that set `port`, for a message about it. */
function portVariable(port: number, ports: EmulatorPorts, statusPortNumber: number): string | undefined {
  if (port === ports.dynamodb) return 'DYNAMODB_PORT';
  if (port === ports.sqs) return 'SQS_PORT';
  if (port === ports.ses) return 'SES_PORT';
  if (port === statusPortNumber) return 'STATUS_PORT';
  return undefined;
}

const USAGE = `Usage: npm start    (no arguments: settings come from the environment and cdk.json's context)

Runs the whole pipeline on local emulators until Ctrl-C. Environment:
  DYNAMODB_PORT (8000), SQS_PORT (4566), SES_PORT (8005), STATUS_PORT (8010)   its ports
  LOCAL_STATE_DIR (.local)   the PID file and outputs.json (a second pipeline needs its own, and other ports)
  LOCAL_CONSUMERS (2)        consumer processes on the work queue, 1 to 10 (and one on the high-priority queue, one on the schedule queue)
  SES_MAX_SEND_RATE (14)     the local SES's sending rate, recipients a second
  LOCAL_RAW_LOGS=1           print the function's JSON log lines beside the one-line decisions
  CDK_CONTEXT_JSON           context over cdk.json's, as JSON: '{"emailPipeline:callbackUrl":"http://127.0.0.1:9000/hooks"}'`;

/** Starts everything, prints the endpoints, and stops it all on SIGINT or SIGTERM. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  acceptNoArguments('npm start', USAGE, argv, ': npm start takes its settings from the environment');
  const started = Date.now();
  const { settings, consumers, sesAccountRate, ports, statusPort: port } = readConfiguration();
  const rawLogs = process.env.LOCAL_RAW_LOGS === '1';
  claimPidFile();
  let emulators: Emulators | undefined;
  let pipeline: LocalPipeline | undefined;
  let status: StatusEndpoint | undefined;
  let stopping = false;
  /** What the banner says of the teams' consumers. */
  const teamConsumers: string[] = [];

  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping consumers and emulators...`);
    await status?.close().catch(() => undefined);
    await pipeline?.stop().catch(() => undefined);
    await emulators?.stop().catch(() => undefined);
    rmSync(PID_FILE, { force: true });
    rmSync(OUTPUTS_FILE, { force: true });
    // Exit once the line is written: stdout to a pipe is asynchronous, and exit() would drop it.
    process.stdout.write('Stopped.\n', () => process.exit(exitCode));
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // A closed terminal window: stop as for Ctrl-C rather than leave the PID file and outputs.json.
  process.on('SIGHUP', () => void shutdown('SIGHUP'));

  try {
    await checkJava();
    await ensureDynamoDbLocal();
    console.log('Starting DynamoDB Local, the SNS/SQS emulator and the SES emulator...');
    emulators = await startEmulators({ sesAccountRate, ports });
    pipeline = await LocalPipeline.create({
      pauseFile: PAUSE_FILE,
      ledgerRedriveFile: LEDGER_REDRIVE_FILE,
      name: LOCAL_NAME,
      settings,
      endpoints: emulators.endpoints,
      onDecision: (event) => console.log(formatDecision(event)),
      onLine: (line) => {
        const json = line.json;
        // LOCAL_RAW_LOGS=1: every structured line as the function writes it (what CloudWatch Logs gets).
        if (rawLogs && json && ('level' in json || '_aws' in json)) console.log(`${line.consumer} ${line.text}`);
        if (json?.event === 'error') console.error(`${line.consumer} poller error: ${String(json.error)}`);
        else if (!json) console.error(`${line.consumer} ${line.text}`);
      },
    });
    for (let i = 0; i < consumers; i += 1) await pipeline.startConsumer();
    // Each team's queue has a mapping of its own: its share of the consumers, at least one.
    for (const team of Object.keys(settings.teams ?? {})) {
      const count = teamConcurrency(settings.teams ?? {}, team, consumers, 1);
      for (let i = 0; i < count; i += 1) await pipeline.startConsumer({ team });
      teamConsumers.push(`${count} on team ${team}'s queue`);
    }
    // The high-priority queue's own mapping: one consumer of its own.
    await pipeline.startConsumer({ lane: 'high', name: 'high-1' });
    await pipeline.startLedgerConsumer();
    // Scheduled mail waits in the schedule queue, moved on by its own consumer (the schedule function).
    await pipeline.startScheduleConsumer();
    // Status changes to the callback URLs (callbackUrl, a team's callbackUrl), when any is set.
    if (pipeline.resources.callbacks) await pipeline.startCallbackConsumer();
    // GET /deliveries/{key} and the cancel URL's DELETE: the deployed functions' code over the local tables.
    const target = {
      db: DynamoDBDocumentClient.from(pipeline.dynamodb),
      ledgerTableName: pipeline.resources.ledger.tableName,
      idempotencyTableName: pipeline.resources.tableName,
      keyPrefix: settings.idempotencyKeyPrefix,
    };
    status = await startStatusEndpoint({
      port,
      lookup: (key, team) => lookupDelivery(target, key, team),
      cancel: (key, team) =>
        cancelDelivery(
          { ...target, dynamodb: pipeline!.dynamodb, dedupeWindowSeconds: settings.dedupeWindowSeconds },
          key,
          LOCAL_CANCELLER,
          team,
        ),
      // Each team with status readers or cancellers: its own URLs, as the functions' team aliases on AWS.
      ...(settings.teams ? { teams: settings.teams } : {}),
      onError: (error) =>
        console.error(`status lookup failed: ${error instanceof Error ? error.message : String(error)}`),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node says EADDRINUSE, DynamoDB Local (Java) "Failed to bind to 0.0.0.0/0.0.0.0:8000".
    const taken = /(?:EADDRINUSE: address already in use|Failed to bind to) [^\s]*:(\d+)/.exec(message)?.[1];
    if (taken !== undefined) {
      // The emulator's own output (a stack trace) adds nothing to this.
      const variable = portVariable(Number(taken), ports, port);
      console.error(
        `npm start: port ${taken}${variable ? ` (${variable})` : ''} is in use, by another npm start or another program.\n` +
          'Stop what holds it, or choose other ports with DYNAMODB_PORT, SQS_PORT, SES_PORT and STATUS_PORT.',
      );
    } else {
      console.error(`npm start: ${message}`);
    }
    await shutdown('startup failed', 1);
    return;
  }

  const { endpoints } = emulators;
  const { resources } = pipeline;
  const outputs = localOutputs(resources, endpoints, settings.idempotencyKeyPrefix, {
    statusUrl: `${status.url}/deliveries/`,
    cancelUrl: `${status.cancelUrl}/deliveries/`,
    teams: status.teams,
  });
  writeFileSync(OUTPUTS_FILE, `${JSON.stringify(outputs, null, 2)}\n`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  // The CLI finds a pipeline by its state folder: a second pipeline's commands must name it too.
  const stateEnv = process.env.LOCAL_STATE_DIR ? `LOCAL_STATE_DIR=${STATE_DIR} ` : '';
  console.log(
    [
      '',
      `Local email pipeline ready in ${seconds} s (${consumers} consumer${consumers > 1 ? 's' : ''}, ${[...teamConsumers, '1 on the high-priority queue'].join(', ')} and 1 on the schedule queue, batch size ${settings.batchSize}).`,
      '',
      `  SNS and SQS   ${endpoints.sns}`,
      `  DynamoDB      ${endpoints.dynamodb}   table ${resources.tableName}`,
      `  SES v2        ${endpoints.ses}   sent mail: ${endpoints.ses}/store   max send rate ${sesAccountRate}/s (SES_MAX_SEND_RATE), pipeline maxSendRate ${settings.maxSendRate}/s`,
      `  Mailbox page  ${endpoints.mailboxUrl}`,
      `  Topic         ${resources.topicArn}`,
      `  High priority ${resources.highPriorityTopicArn}`,
      ...Object.entries(resources.teams ?? {}).map(
        ([team, route]) =>
          `  Team ${team.padEnd(8)} ${route.topicArn}${route.highPriorityTopicArn ? `   high priority ${route.highPriorityTopicArn}` : ''}`,
      ),
      `  Status        ${status.url}/deliveries/{key}   or: ${stateEnv}npm run status -- <key>`,
      `  Cancel        DELETE ${status.cancelUrl}/deliveries/{key}`,
      ...Object.entries(status.teams).map(
        ([team, urls]) =>
          `  Team URLs     ${team}: ${urls.statusUrl}/deliveries/{key}${urls.cancelUrl ? `   DELETE ${urls.cancelUrl}/deliveries/{key}` : ''}   (its keys only; no IAM locally: anyone here may call them)`,
      ),
      ...Object.entries(resources.callbacks?.targets ?? {}).map(
        ([target, callback]) =>
          `  Callbacks     ${target === '*' ? '' : `team ${target}: `}POST ${callback.url}   signing secret in outputs.json (${target === '*' ? 'CallbackSigningSecret' : `Teams.${target}.CallbackSigningSecret`})`,
      ),
      `  Outputs       ${path.relative(process.cwd(), OUTPUTS_FILE)}`,
      ...(existsSync(PAUSE_FILE)
        ? ['', `  Sending is PAUSED (left so by email-pipeline pause): ${stateEnv}npm run -s resume starts it.`]
        : []),
      '',
      'Publish an email (AWS CLI; any credentials work locally):',
      '',
      `  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local aws --region us-east-1 --endpoint-url ${endpoints.sns} \\`,
      `    sns publish --topic-arn ${resources.topicArn} \\`,
      `    --message '{"to":"you@example.com","subject":"Hello","text":"Sent exactly once."}' \\`,
      `    --message-attributes '{"idempotency-key":{"DataType":"String","StringValue":"order-42"}}'`,
      '',
      `or: ${stateEnv}npm run -s publish-email -- --to you@example.com --subject Hello --text "Sent exactly once." --idempotency-key order-42`,
      '',
      'One line per decision follows. Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}
