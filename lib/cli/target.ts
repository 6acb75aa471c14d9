/**
 * Which pipeline a command talks to: a deployed one (`--stack NAME`, or EMAIL_PIPELINE_STACK: the
 * stack's CloudFormation outputs, with the usual AWS region and credentials, or `--region`), or
 * the local one (`npm start`, in this repository, writes its endpoints to `.local/outputs.json`,
 * or `$LOCAL_STATE_DIR/outputs.json`).
 *
 * A stack may hold several pipelines. Each EmailPipeline construct describes itself in one output
 * whose value is a JSON object: `{"emailPipeline":"<its construct path in the stack>","v":1,
 * "TopicArn":...,"QueueUrl":...}`, and its monitoring in another (`{"emailPipelineMonitoring":
 * "<the pipeline's path>","v":1,"AlarmTopicArn":...}`). `--pipeline NAME` (or EMAIL_PIPELINE_NAME)
 * picks one by its path or the path's last part; a stack holding one needs none. A stack deployed
 * before pipelines described themselves has flat outputs (TopicArn, DeadLetterQueueUrl, ...): they
 * are its one pipeline.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  CloudFormationClient,
  DescribeStacksCommand,
  type DescribeStacksCommandOutput,
} from '@aws-sdk/client-cloudformation';
import { awsFailure, OperationError, UsageError } from './errors';
import { selectPipeline } from './stack-outputs';
import { PACKAGE_NAME, TARGET_ENV } from './target-names';

export { MONITORING_MARK, OUTPUTS_VERSION, PACKAGE_NAME, PIPELINE_MARK, TARGET_ENV } from './target-names';

/** Region and credentials of the local emulators (any values work; these are the ones npm start uses). */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** The account of the local resources (the emulators' ARNs, the local SES's `sendingAccountId`). */
export const LOCAL_ACCOUNT_ID = '000000000000';

/** The options of every command that talks to a pipeline (node:util parseArgs). */
export const TARGET_OPTIONS = {
  stack: { type: 'string' },
  pipeline: { type: 'string' },
  region: { type: 'string' },
} as const;

/** The target options as a usage line shows them. */
export const TARGET_SYNOPSIS = '[--stack NAME [--pipeline NAME]] [--region R]';

/** The paragraph every usage text ends with: how the target is chosen. */
export const TARGET_HELP = `Target: --stack NAME (or ${TARGET_ENV.stack}) names a deployed stack, read with the usual AWS
credentials; --pipeline NAME (or ${TARGET_ENV.pipeline}) one of its pipelines, by construct path
(Mail/Billing) or its last part (Billing), needed only when the stack holds several; --region R
(else AWS_REGION or the profile's). The flags win over the variables. Without a stack, the local
pipeline of this repository's npm start.`;

/** Where `npm start` keeps its state. */
export function localStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.LOCAL_STATE_DIR || path.join(process.cwd(), '.local');
}

/** Client settings for one service of the target. */
export interface ClientSettings {
  readonly region?: string;
  readonly endpoint?: string;
  readonly credentials?: typeof LOCAL_CREDENTIALS;
}

export interface Target {
  /** `the local pipeline (<dir>)`, `stack <name>` or `pipeline <path> of stack <name>`: said in what the commands print. */
  readonly description: string;
  readonly local: boolean;
  /** The stack, when deployed. */
  readonly stack?: string;
  /** The pipeline's construct path in the stack, when the stack names its pipelines. */
  readonly pipeline?: string;
  /** The options that name this target again on a command line (` --stack S --pipeline P`), or ''. */
  readonly flags: string;
  /** Outputs (TopicArn, QueueUrl, DeadLetterQueueUrl, ...). */
  readonly outputs: Readonly<Record<string, string>>;
  readonly clients: { readonly sns: ClientSettings; readonly sqs: ClientSettings; readonly dynamodb: ClientSettings };
}

export interface TargetOptions {
  readonly stack?: string | undefined;
  readonly pipeline?: string | undefined;
  readonly region?: string | undefined;
}

/**
 * The target a command line names: the flags, else the environment variables. Throws UsageError
 * (before any AWS call) for a pipeline named without a stack.
 */
export function targetOptions(
  values: TargetOptions,
  usage: string,
  env: NodeJS.ProcessEnv = process.env,
): TargetOptions {
  const stack = values.stack ?? (env[TARGET_ENV.stack] || undefined);
  const pipeline = values.pipeline ?? (env[TARGET_ENV.pipeline] || undefined);
  if (values.stack === '') throw new UsageError('--stack needs a stack name', usage);
  if (values.pipeline === '') throw new UsageError('--pipeline needs a pipeline name', usage);
  if (pipeline !== undefined && stack === undefined) {
    const named = values.pipeline !== undefined ? '--pipeline' : `${TARGET_ENV.pipeline} (set to ${pipeline})`;
    throw new UsageError(
      `${named} picks a pipeline of a deployed stack: name the stack too, with --stack NAME or ${TARGET_ENV.stack}`,
      usage,
    );
  }
  return {
    ...(stack !== undefined ? { stack } : {}),
    ...(pipeline !== undefined ? { pipeline } : {}),
    ...(values.region !== undefined ? { region: values.region } : {}),
  };
}

/**
 * False only when nothing listens at `endpoint` (the connection is refused at once: a pipeline
 * killed without cleaning up). A slow answer from a busy machine is still an answer: the
 * operation itself then runs with its own timeouts.
 */
async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(10_000) });
    return true;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code !== 'ECONNREFUSED';
  }
}

/** True when `dir` is in this package's own repository (the nearest package.json is this package's). */
export function inThisRepository(dir: string = process.cwd()): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const file = path.join(at, 'package.json');
    if (existsSync(file)) {
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME;
      } catch {
        return false;
      }
    }
    if (path.dirname(at) === at) return false;
  }
}

/** What to say when no stack is named and no local pipeline runs. */
export function noTargetMessage(file: string, inRepository: boolean): string {
  const stack = `--stack NAME (or set ${TARGET_ENV.stack})`;
  if (inRepository) {
    return `No local pipeline found (${file} is missing). Start one with npm start, or pass ${stack} for a deployed stack.`;
  }
  return (
    `No pipeline named: pass ${stack} for a deployed stack, with --pipeline NAME (or ${TARGET_ENV.pipeline}) ` +
    `when it holds several, and --region R. (No local pipeline runs here either: ${file} is missing.)`
  );
}

async function localTarget(): Promise<Target> {
  const dir = localStateDir();
  const file = path.join(dir, 'outputs.json');
  if (!existsSync(file)) throw new OperationError(noTargetMessage(file, inThisRepository()));
  const outputs = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const sqs = outputs.SqsEndpoint ?? '';
  if (!(await answers(sqs))) {
    throw new OperationError(
      `The local pipeline of ${file} is not running (nothing answers at ${sqs}): the file is left from a run that ` +
        'did not stop cleanly. Start it again with npm start (which replaces the file).',
    );
  }
  const local = (endpoint: string | undefined): ClientSettings => ({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    ...(endpoint ? { endpoint } : {}),
  });
  return {
    description: `the local pipeline (${dir})`,
    local: true,
    flags: '',
    outputs,
    clients: {
      sns: local(outputs.SnsEndpoint),
      sqs: local(outputs.SqsEndpoint),
      dynamodb: local(outputs.DynamoDbEndpoint),
    },
  };
}

/** The SDK's "Region is missing" as advice. */
function regionAdvice(error: unknown): never {
  const text = error instanceof Error ? error.message : String(error);
  if (/region is missing|region=""/i.test(text)) {
    throw new OperationError(
      'No AWS region is configured: pass --region, or set AWS_REGION (or a profile with a region).',
    );
  }
  throw error;
}

export { describedPipelines, selectPipeline, type SelectedPipeline, type StackOutput } from './stack-outputs';

/** What DescribeStacks is called on: a CloudFormation client, or a stand-in with the same `send`. */
export interface StackReader {
  send(command: DescribeStacksCommand): Promise<Pick<DescribeStacksCommandOutput, 'Stacks'>>;
}

export interface TargetDeps {
  /** Reads the stack (a stand-in in tests). @default a CloudFormationClient in the target's region */
  readonly cloudFormation?: StackReader;
}

async function stackTarget(options: TargetOptions & { stack: string }, deps: TargetDeps): Promise<Target> {
  const { stack, region } = options;
  const regional: ClientSettings = region ? { region } : {};
  const own = deps.cloudFormation ? undefined : new CloudFormationClient(regional);
  const reader: StackReader = deps.cloudFormation ?? (own as CloudFormationClient);
  try {
    const { Stacks = [] } = await reader
      .send(new DescribeStacksCommand({ StackName: stack }))
      .catch(regionAdvice)
      .catch((error: unknown) => {
        throw awsFailure(`Could not read the outputs of stack ${stack}`, error);
      });
    const selected = selectPipeline(stack, Stacks[0]?.Outputs ?? [], options.pipeline);
    const flags = [
      ` --stack ${stack}`,
      selected.path !== undefined && options.pipeline !== undefined ? ` --pipeline ${selected.path}` : '',
      region ? ` --region ${region}` : '',
    ].join('');
    return {
      description: selected.path !== undefined ? `pipeline ${selected.path} of stack ${stack}` : `stack ${stack}`,
      local: false,
      stack,
      ...(selected.path !== undefined ? { pipeline: selected.path } : {}),
      flags,
      outputs: selected.outputs,
      clients: { sns: regional, sqs: regional, dynamodb: regional },
    };
  } finally {
    own?.destroy();
  }
}

/**
 * Resolves the target of a command: the stack (and pipeline) when named, else the local
 * pipeline. `options` come from {@link targetOptions} (the flags, else the environment).
 */
export function resolveTarget(options: TargetOptions, deps: TargetDeps = {}): Promise<Target> {
  return options.stack ? stackTarget({ ...options, stack: options.stack }, deps) : localTarget();
}

/** One output of the target, or an error naming the target (stack and pipeline) and the missing output. */
export function output(target: Target, name: string): string {
  const value = target.outputs[name];
  if (value) return value;
  if (target.local) {
    throw new OperationError(
      `${target.description} has no ${name} output: it was started by an older version; stop it and start it again with npm start.`,
    );
  }
  throw new OperationError(
    `${target.description} has no ${name} output: it was deployed with an older version of ${PACKAGE_NAME}, or without ` +
      `the feature that needs it. Deploy it again with this version${target.pipeline === undefined && target.stack !== undefined ? ', or check --stack' : ''}.`,
  );
}
