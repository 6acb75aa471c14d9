/**
 * Where a running `npm start` leaves its state: the PID file that refuses a
 * second start, and outputs.json with the endpoints (read by `npm run publish-email`
 * and `npm run dlq`). LOCAL_STATE_DIR moves it (tests run a pipeline of their
 * own beside a developer's); the default is `.local/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { localPauseFile } from '../../../lib/cli/pause-command';
import { PIPELINE_TARGET } from '../../../lambdas/kernel/callbacks/names';
import type { EmulatorEndpoints } from './emulators';
import { LOCAL_DIR } from './paths';
import type { LocalResources } from './resources';
import { teamOutputs, type LocalTeamOutputs } from './team-topics';

export const STATE_DIR = process.env.LOCAL_STATE_DIR ?? LOCAL_DIR;
export const PID_FILE = path.join(STATE_DIR, 'pipeline.pid');
export const OUTPUTS_FILE = path.join(STATE_DIR, 'outputs.json');
/** `email-pipeline pause`'s switch locally: while it exists the send consumers receive nothing. */
export const PAUSE_FILE = localPauseFile(STATE_DIR);
/** `email-pipeline dlq redrive --queue ledger`'s switch locally: while it exists the ledger consumer reads the ledger DLQ. */
export const LEDGER_REDRIVE_FILE = path.join(STATE_DIR, 'ledger-dlq-redrive');

/** What `npm start` writes to outputs.json: the stack's output keys plus the local endpoints. */
export interface LocalOutputs {
  readonly TopicArn: string;
  /** High-priority mail is published here (the only source of the high-priority queue). */
  readonly HighPriorityTopicArn: string;
  /** `DELETE <CancelUrl><key>` cancels a key not yet sent (the deployed stack's cancel function URL). */
  readonly CancelUrl: string;
  readonly QueueUrl: string;
  readonly DeadLetterQueueUrl: string;
  readonly TableName: string;
  readonly SnsEndpoint: string;
  readonly SqsEndpoint: string;
  readonly DynamoDbEndpoint: string;
  readonly SesEndpoint: string;
  readonly MailboxUrl: string;
  /** The send ledger (SES events per dedupe key). */
  readonly LedgerTableName: string;
  /** Receives a DeliveryReport on every status change. */
  readonly DeliveryStatusTopicArn: string;
  /** Every send uses it; its event destination feeds the ledger. */
  readonly ConfigurationSetName: string;
  // The status lookup (npm run status, GET /deliveries/{key}).
  readonly IdempotencyKeyPrefix: string;
  readonly StatusUrl: string;
  /** The pause switch (email-pipeline pause / resume). */
  readonly PauseFile: string;
  /** The ledger's buffer queue and its DLQ (email-pipeline dlq --queue ledger). */
  readonly LedgerBufferQueueUrl: string;
  readonly LedgerDeadLetterQueueUrl: string;
  /** The ledger DLQ redrive switch (dlq redrive --queue ledger), the local stand-in of LedgerDeadLetterMappingId. */
  readonly LedgerRedriveFile: string;
  /** Contract v1.2: the attachments bucket, on fauxqs's S3 (path-style at S3Endpoint, the SNS/SQS port). */
  readonly AttachmentsBucketName?: string;
  readonly S3Endpoint: string;
  /** Each team's topics (the `teams` setting); none without teams. With callbacks, a team's signing secret too. */
  readonly Teams?: LocalTeamOutputs;
  /** The callbacks' queue, DLQ and table (as the stack's `Endpoints.Callbacks`); none without a callback. */
  readonly Callbacks?: { readonly QueueUrl: string; readonly DeadLetterQueueUrl: string; readonly TableName: string };
  /** The signing secret (`whsec_…`) of `callbackUrl`'s callback: a receiver verifies with it. */
  readonly CallbackSigningSecret?: string;
}

/** The teams' outputs with each team's callback signing secret added (locally the secret itself). */
function withCallbackSecrets(teams: LocalTeamOutputs, resources: LocalResources): LocalTeamOutputs {
  const targets = resources.callbacks?.targets ?? {};
  return Object.fromEntries(
    Object.entries(teams).map(([team, outputs]) => {
      const secret = targets[team]?.secret;
      return [team, secret !== undefined ? { ...outputs, CallbackSigningSecret: secret } : outputs];
    }),
  );
}

/**
 * The outputs of a local pipeline: its resources, the emulators' endpoints, the key prefix, the
 * status and cancel URLs, and each team's own (`teams`: the local status server's, by team).
 */
export function localOutputs(
  resources: LocalResources,
  endpoints: EmulatorEndpoints,
  idempotencyKeyPrefix: string,
  urls: {
    readonly statusUrl: string;
    readonly cancelUrl: string;
    readonly teams?: Parameters<typeof teamOutputs>[1];
  },
): LocalOutputs {
  const { statusUrl, cancelUrl } = urls;
  return {
    TopicArn: resources.topicArn,
    HighPriorityTopicArn: resources.highPriorityTopicArn,
    CancelUrl: cancelUrl,
    QueueUrl: resources.queueUrl,
    DeadLetterQueueUrl: resources.deadLetterQueueUrl,
    TableName: resources.tableName,
    SnsEndpoint: endpoints.sns,
    SqsEndpoint: endpoints.sqs,
    DynamoDbEndpoint: endpoints.dynamodb,
    SesEndpoint: endpoints.ses,
    MailboxUrl: endpoints.mailboxUrl,
    LedgerTableName: resources.ledger.tableName,
    DeliveryStatusTopicArn: resources.ledger.deliveryStatusTopicArn,
    ConfigurationSetName: resources.ledger.configurationSetName,
    IdempotencyKeyPrefix: idempotencyKeyPrefix,
    StatusUrl: statusUrl,
    PauseFile: PAUSE_FILE,
    LedgerBufferQueueUrl: resources.ledger.bufferQueueUrl,
    LedgerDeadLetterQueueUrl: resources.ledger.bufferDeadLetterQueueUrl,
    LedgerRedriveFile: LEDGER_REDRIVE_FILE,
    ...(resources.attachmentsBucketName ? { AttachmentsBucketName: resources.attachmentsBucketName } : {}),
    S3Endpoint: endpoints.sqs,
    ...(resources.teams ? { Teams: withCallbackSecrets(teamOutputs(resources.teams, urls.teams), resources) } : {}),
    ...(resources.callbacks
      ? {
          Callbacks: {
            QueueUrl: resources.callbacks.queueUrl,
            DeadLetterQueueUrl: resources.callbacks.deadLetterQueueUrl,
            TableName: resources.callbacks.tableName,
          },
        }
      : {}),
    ...(resources.callbacks?.targets[PIPELINE_TARGET]?.secret !== undefined
      ? { CallbackSigningSecret: resources.callbacks.targets[PIPELINE_TARGET].secret }
      : {}),
  };
}

/** The running local pipeline's outputs, or undefined when none runs (no outputs.json). */
export function readLocalOutputs(): LocalOutputs | undefined {
  return existsSync(OUTPUTS_FILE) ? (JSON.parse(readFileSync(OUTPUTS_FILE, 'utf8')) as LocalOutputs) : undefined;
}
