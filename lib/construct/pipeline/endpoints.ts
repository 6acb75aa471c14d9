/**
 * What publishers, operators and the CLI need to find a pipeline, declared once: each entry names
 * a value of a built EmailPipeline and says what it is for.
 *
 * Every pipeline emits them as ONE stack output (its `Endpoints` output, a compact JSON object
 * `{"emailPipeline": "<path in the stack>", "v": 1, "TopicArn": ..., ...}`), whatever stack it is in
 * and however many pipelines that stack holds; `email-pipeline --stack S [--pipeline P]` reads it.
 * One output per pipeline rather than one per value: a template holds at most 200 outputs, two
 * pipelines would take 40 of them, and output names would have to be made unique by hand. The
 * value is written at deploy time, so it cannot drift from the resources; reading it needs only
 * `cloudformation:DescribeStacks`, which the CLI needs anyway (a parameter store entry would need
 * one more permission, one more client and a resource to keep in step).
 *
 * EmailPipelineStack also writes each value as a flat output of its own (`TopicArn`, ...), which
 * `aws cloudformation describe-stacks` queries and older CLIs read.
 */
import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { PIPELINE_TARGET } from '../../../lambdas/kernel/callbacks/names';
import type { ResolvedSettings } from '../../settings';

/** What the endpoints are read from: the parts of a built EmailPipeline they name. */
export interface EndpointSource {
  readonly topic: { readonly topicArn: string };
  readonly highPriorityTopic: { readonly topicArn: string };
  readonly queue: { readonly queueUrl: string };
  readonly highPriorityQueue: { readonly queueUrl: string };
  readonly deadLetterQueue: { readonly queueUrl: string };
  readonly subscriptionDeadLetterQueue: { readonly queueUrl: string };
  readonly table: { readonly tableName: string };
  readonly sendFunction: { readonly functionName: string };
  readonly redriveRole: { readonly roleArn: string };
  readonly attachmentsBucket: { readonly bucketName: string };
  /** Each team's topics (none without teams: then the endpoints have no `Teams`). */
  readonly teamTopics?: Readonly<
    Record<
      string,
      { readonly topic: { readonly topicArn: string }; readonly highPriorityTopic?: { readonly topicArn: string } }
    >
  >;
  /** Each team's SES tenant, for the teams with one (then its `Teams` entry names it). */
  readonly teamTenants?: Readonly<Record<string, { readonly tenantName: string }>>;
  readonly settings: ResolvedSettings;
  readonly logGroupNames: {
    readonly send: string;
    readonly ledger: string;
    readonly status: string;
    readonly callbacks?: string;
  };
  /** The callbacks, when configured (then the endpoints have `Callbacks`). */
  readonly callbacks?: {
    readonly queue: { readonly queueUrl: string };
    readonly deadLetterQueue: { readonly queueUrl: string };
    readonly table: { readonly tableName: string };
    readonly callbackFunction: { readonly functionName: string };
    /** By target: `*` the pipeline's own callback, else a team's name. */
    readonly signingSecrets: Readonly<Record<string, { readonly secretArn: string }>>;
  };
  readonly ledger: {
    readonly statusUrl: { readonly url: string };
    readonly cancelUrl: { readonly url: string };
    readonly deliveryStatusTopic: { readonly topicArn: string };
    readonly table: { readonly tableName: string };
    readonly ledgerFunction: { readonly functionName: string };
    readonly bufferQueue: { readonly queueUrl: string };
    readonly bufferDeadLetterQueue: { readonly queueUrl: string };
    readonly deadLetterMapping: { readonly id: string };
    readonly configurationSetName: string;
    /** Each team's own status and cancel URLs (team-urls.ts), for the teams that have them. */
    readonly teamUrls?: Readonly<
      Record<string, { readonly statusUrl?: { readonly url: string }; readonly cancelUrl?: { readonly url: string } }>
    >;
  };
}

/** Version of the endpoints object: a CLI refuses a newer one it cannot read. */
export const ENDPOINTS_VERSION = 1;

/** The field that marks an output's JSON value as a pipeline's endpoints (its value: the pipeline's path). */
export const PIPELINE_MARKER = 'emailPipeline';
/** The field that marks an output's JSON value as a pipeline's monitoring endpoints. */
export const MONITORING_MARKER = 'emailPipelineMonitoring';

export interface Endpoint {
  /** The output's name (flat outputs) and the key in the JSON object. */
  readonly name: string;
  readonly description: string;
  readonly value: (pipeline: EndpointSource) => string;
}

/** Every endpoint of a pipeline, in the order the stack's flat outputs list them. */
export const PIPELINE_ENDPOINTS: readonly Endpoint[] = [
  { name: 'TopicArn', description: 'Publish email requests here', value: (p) => p.topic.topicArn },
  {
    name: 'HighPriorityTopicArn',
    description:
      'Publish high-priority email requests here (highPriorityPublisherPrincipals, grantPublishHighPriority): the only source of the high-priority queue',
    value: (p) => p.highPriorityTopic.topicArn,
  },
  {
    name: 'CancelUrl',
    description:
      'DELETE <CancelUrl><key> (SigV4, lambda:InvokeFunctionUrl, granted to the cancel principals only): cancels a key not yet sent',
    value: (p) => `${p.ledger.cancelUrl.url}deliveries/`,
  },
  {
    name: 'QueueUrl',
    description: 'Work queue between the topic and the function',
    value: (p) => p.queue.queueUrl,
  },
  {
    name: 'HighPriorityQueueUrl',
    description: 'The high-priority lane: its own queue, mapping and reserved share of the rate',
    value: (p) => p.highPriorityQueue.queueUrl,
  },
  {
    name: 'DeadLetterQueueUrl',
    description: 'Permanent failures and messages past maxReceiveCount',
    value: (p) => p.deadLetterQueue.queueUrl,
  },
  { name: 'TableName', description: 'Idempotency records', value: (p) => p.table.tableName },
  { name: 'FunctionName', description: 'The send-email function', value: (p) => p.sendFunction.functionName },
  {
    name: 'RedriveRoleArn',
    description:
      'Assume this role to list, redrive or purge the DLQ (email-pipeline dlq ... --stack); the queue policies exempt it by ARN',
    value: (p) => p.redriveRole.roleArn,
  },
  {
    name: 'StatusUrl',
    description: 'GET <StatusUrl><key> (SigV4, lambda:InvokeFunctionUrl): the delivery status of a dedupe key',
    value: (p) => `${p.ledger.statusUrl.url}deliveries/`,
  },
  {
    name: 'DeliveryStatusTopicArn',
    description: 'Every status change of a key; filter on the status and idempotency-key attributes',
    value: (p) => p.ledger.deliveryStatusTopic.topicArn,
  },
  {
    name: 'LedgerTableName',
    description: 'Send ledger: SES MessageId, status and events per dedupe key',
    value: (p) => p.ledger.table.tableName,
  },
  {
    name: 'LedgerFunctionName',
    description: 'The ledger function (records SES events)',
    value: (p) => p.ledger.ledgerFunction.functionName,
  },
  {
    name: 'SubscriptionDeadLetterQueueUrl',
    description: 'Deliveries SNS could not make to the work queue (email-pipeline dlq --queue subscription)',
    value: (p) => p.subscriptionDeadLetterQueue.queueUrl,
  },
  {
    name: 'LedgerBufferQueueUrl',
    description: 'SES events on their way to the ledger function',
    value: (p) => p.ledger.bufferQueue.queueUrl,
  },
  {
    name: 'LedgerDeadLetterQueueUrl',
    description: 'SES events the ledger function could not record (email-pipeline dlq --queue ledger)',
    value: (p) => p.ledger.bufferDeadLetterQueue.queueUrl,
  },
  {
    name: 'LedgerDeadLetterMappingId',
    description:
      "UUID of the ledger function's mapping of the ledger DLQ, disabled: email-pipeline dlq redrive --queue ledger enables it until the DLQ is drained",
    value: (p) => p.ledger.deadLetterMapping.id,
  },
  {
    name: 'AttachmentsBucketName',
    description: 'Attachments sent by s3Key (contract v1.2); grantAttachmentUpload lets a principal put objects',
    value: (p) => p.attachmentsBucket.bucketName,
  },
  {
    name: 'ConfigurationSetName',
    description: 'The SES configuration set every send uses (its events feed the ledger)',
    value: (p) => p.ledger.configurationSetName,
  },
  {
    name: 'IdempotencyKeyPrefix',
    description: 'Prefix of the idempotency records (the status lookup reads them)',
    value: (p) => p.settings.idempotencyKeyPrefix,
  },
  {
    name: 'MaxScheduleAheadSeconds',
    description: 'How far ahead a message may name its sendAt (email-pipeline publish --send-at checks it)',
    value: (p) => String(p.settings.maxScheduleAheadSeconds),
  },
  {
    name: 'SendLogGroupName',
    description: 'Log group of the send function (one line per decision, keyed by dedupeKey)',
    value: (p) => p.logGroupNames.send,
  },
  {
    name: 'LedgerLogGroupName',
    description: 'Log group of the ledger function (one line per SES event recorded)',
    value: (p) => p.logGroupNames.ledger,
  },
  {
    name: 'StatusLogGroupName',
    description: 'Log group of the status function',
    value: (p) => p.logGroupNames.status,
  },
];

/** `construct`'s path inside its stack (`Billing`, `Mail/Billing`): how the CLI's `--pipeline` names it. */
export function pathInStack(construct: Construct): string {
  const stackPath = Stack.of(construct).node.path;
  const own = construct.node.path;
  return stackPath && own.startsWith(`${stackPath}/`) ? own.slice(stackPath.length + 1) : own;
}

/**
 * The JSON value of a pipeline's `Endpoints` output (tokens resolved at deploy time), marked with
 * `marker` and the pipeline's path.
 */
export function endpointsJson(
  scope: Construct,
  marker: typeof PIPELINE_MARKER | typeof MONITORING_MARKER,
  pipelinePath: string,
  values: Readonly<Record<string, unknown>>,
): string {
  return Stack.of(scope).toJsonString({ [marker]: pipelinePath, v: ENDPOINTS_VERSION, ...values });
}

/**
 * The `Teams` endpoint: each team's `TopicArn` and, for a team with high priority,
 * `HighPriorityTopicArn`; for a team with its own readers or cancellers, its `StatusUrl` and
 * `CancelUrl` (team-urls.ts), each ending in `deliveries/` as the pipeline's do; for a team with an
 * SES tenant, its `TenantName`.
 */
export type TeamEndpoints = Record<
  string,
  {
    readonly TopicArn: string;
    readonly HighPriorityTopicArn?: string;
    readonly StatusUrl?: string;
    readonly CancelUrl?: string;
    /** The team's callback signing secret (Secrets Manager), when it has a callback. */
    readonly CallbackSigningSecretArn?: string;
    /** The team's SES tenant, when it has one (`sesTenant`): what `GetTenant` takes. */
    readonly TenantName?: string;
  }
>;

/**
 * The `Callbacks` endpoint, when a callback is configured: its queue, DLQ, table, function and log
 * group, and the signing secret of the pipeline's own callback (keys without a team), when it has
 * one; a team's is `Teams.<name>.CallbackSigningSecretArn`.
 */
export interface CallbackEndpoints {
  readonly QueueUrl: string;
  readonly DeadLetterQueueUrl: string;
  readonly TableName: string;
  readonly FunctionName: string;
  readonly LogGroupName?: string;
  readonly SigningSecretArn?: string;
}

/** A team's own URLs as endpoints (none when it has none). */
function urlsOf(urls: { readonly statusUrl?: { url: string }; readonly cancelUrl?: { url: string } } | undefined) {
  return {
    ...(urls?.statusUrl ? { StatusUrl: `${urls.statusUrl.url}deliveries/` } : {}),
    ...(urls?.cancelUrl ? { CancelUrl: `${urls.cancelUrl.url}deliveries/` } : {}),
  };
}

/** The callbacks' endpoints, or undefined without callbacks. */
function callbackEndpoints(pipeline: EndpointSource): CallbackEndpoints | undefined {
  const callbacks = pipeline.callbacks;
  if (callbacks === undefined) return undefined;
  const own = callbacks.signingSecrets[PIPELINE_TARGET];
  return {
    QueueUrl: callbacks.queue.queueUrl,
    DeadLetterQueueUrl: callbacks.deadLetterQueue.queueUrl,
    TableName: callbacks.table.tableName,
    FunctionName: callbacks.callbackFunction.functionName,
    ...(pipeline.logGroupNames.callbacks !== undefined ? { LogGroupName: pipeline.logGroupNames.callbacks } : {}),
    ...(own ? { SigningSecretArn: own.secretArn } : {}),
  };
}

/** A team's callback signing secret as an endpoint (none when it has no callback). */
function secretOf(secret: { readonly secretArn: string } | undefined) {
  return secret ? { CallbackSigningSecretArn: secret.secretArn } : {};
}

/** Every endpoint of `pipeline`, by name; `Teams` only when it has teams, `Callbacks` only with callbacks. */
export function pipelineEndpointValues(
  pipeline: EndpointSource,
): Record<string, string | TeamEndpoints | CallbackEndpoints> {
  const values: Record<string, string | TeamEndpoints | CallbackEndpoints> = Object.fromEntries(
    PIPELINE_ENDPOINTS.map((e) => [e.name, e.value(pipeline)]),
  );
  const teams = Object.entries(pipeline.teamTopics ?? {});
  if (teams.length > 0) {
    values.Teams = Object.fromEntries(
      teams.map(([name, own]) => [
        name,
        {
          TopicArn: own.topic.topicArn,
          ...(own.highPriorityTopic ? { HighPriorityTopicArn: own.highPriorityTopic.topicArn } : {}),
          ...urlsOf(pipeline.ledger.teamUrls?.[name]),
          ...secretOf(pipeline.callbacks?.signingSecrets[name]),
          ...(pipeline.teamTenants?.[name] ? { TenantName: pipeline.teamTenants[name].tenantName } : {}),
        },
      ]),
    );
  }
  const callbacks = callbackEndpoints(pipeline);
  if (callbacks !== undefined) values.Callbacks = callbacks;
  return values;
}
