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
import { awsFailure, OperationError, suggestion, UsageError } from './errors';

/** Region and credentials of the local emulators (any values work; these are the ones npm start uses). */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** The account of the local resources (the emulators' ARNs, the local SES's `sendingAccountId`). */
export const LOCAL_ACCOUNT_ID = '000000000000';

/** The environment variables that name a target when the flags do not. */
export const TARGET_ENV = { stack: 'EMAIL_PIPELINE_STACK', pipeline: 'EMAIL_PIPELINE_NAME' } as const;

/** The field of an output value (a JSON object) that marks it as a pipeline's, and its monitoring's. */
export const PIPELINE_MARK = 'emailPipeline';
export const MONITORING_MARK = 'emailPipelineMonitoring';
/** The newest version of those objects this CLI reads. */
export const OUTPUTS_VERSION = 1;

/** The name of this package (how the CLI tells it runs inside its own repository). */
export const PACKAGE_NAME = 'exactly-once-email';

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

/** One output of CloudFormation's DescribeStacks answer. */
export interface StackOutput {
  readonly OutputKey?: string | undefined;
  readonly OutputValue?: string | undefined;
}

/** The pipeline a stack's outputs describe. */
export interface SelectedPipeline {
  /** Its construct path in the stack; undefined for a stack's flat outputs. */
  readonly path?: string;
  readonly outputs: Readonly<Record<string, string>>;
}

/** The flat outputs that make a stack one pipeline's (the repository's EmailPipelineStack, older deployments). */
const FLAT_MARKS = ['TopicArn', 'DeadLetterQueueUrl'] as const;

/** An output value as the JSON object it holds, or undefined. */
function jsonObject(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || !value.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The values of a described object as outputs: strings as they are, numbers and booleans as text. */
function described(object: Record<string, unknown>, marks: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(object)) {
    if (marks.includes(key) || key === 'v') continue;
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[key] = String(value);
  }
  return out;
}

/** The pipelines a stack's outputs describe, by construct path (monitoring merged in), sorted by path. */
export function describedPipelines(
  stack: string,
  outputs: readonly StackOutput[],
): Map<string, Record<string, string>> {
  const pipelines = new Map<string, Record<string, string>>();
  const monitoring: [string, Record<string, string>][] = [];
  for (const output of outputs) {
    const object = jsonObject(output.OutputValue);
    if (!object) continue;
    const pipeline = object[PIPELINE_MARK];
    const monitored = object[MONITORING_MARK];
    const at = typeof pipeline === 'string' ? pipeline : typeof monitored === 'string' ? monitored : undefined;
    if (at === undefined) continue;
    if (typeof object.v === 'number' && object.v > OUTPUTS_VERSION) {
      throw new OperationError(
        `The output ${output.OutputKey ?? ''} of stack ${stack} describes pipeline ${at} in version ${object.v} of ` +
          `its outputs; this CLI reads version ${OUTPUTS_VERSION}: install the version of ${PACKAGE_NAME} the stack was deployed with.`,
      );
    }
    if (typeof pipeline === 'string') {
      if (pipelines.has(pipeline)) {
        throw new OperationError(`Stack ${stack} has two outputs describing pipeline ${pipeline}: deploy it again.`);
      }
      pipelines.set(pipeline, described(object, [PIPELINE_MARK]));
    } else {
      monitoring.push([at, described(object, [MONITORING_MARK])]);
    }
  }
  for (const [at, values] of monitoring) {
    const pipeline = pipelines.get(at);
    // The pipeline's own values win: monitoring only adds its topics and alarm prefix.
    if (pipeline) pipelines.set(at, { ...values, ...pipeline });
  }
  return new Map([...pipelines.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const lastPart = (at: string) => at.slice(at.lastIndexOf('/') + 1);

/**
 * The pipeline of a stack that `wanted` names (its path, or the path's last part), or the stack's
 * only one. Throws OperationError naming the stack and listing its pipelines when `wanted` names
 * none or several, or when it names none and the stack holds several.
 */
export function selectPipeline(
  stack: string,
  outputs: readonly StackOutput[],
  wanted: string | undefined,
): SelectedPipeline {
  const pipelines = describedPipelines(stack, outputs);
  const paths = [...pipelines.keys()];
  const list = paths.join(', ');
  const choose = `--pipeline NAME (or ${TARGET_ENV.pipeline})`;
  if (paths.length === 0) {
    const flat = Object.fromEntries(
      outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
    );
    if (!FLAT_MARKS.some((mark) => flat[mark])) {
      throw new OperationError(
        `Stack ${stack} holds no email pipeline: none of its ${outputs.length} output(s) describes one. Check the ` +
          `stack name (--stack) and the region; a pipeline deployed with an older version of ${PACKAGE_NAME} ` +
          'describes itself once deployed again with this one.',
      );
    }
    if (wanted !== undefined) {
      throw new OperationError(
        `Stack ${stack} has the outputs of one pipeline that names itself nowhere (deployed with an older version ` +
          `of ${PACKAGE_NAME}, or this repository's own stack): leave out --pipeline and ${TARGET_ENV.pipeline}.`,
      );
    }
    return { outputs: flat };
  }
  if (wanted === undefined) {
    if (paths.length === 1) return { path: paths[0] as string, outputs: pipelines.get(paths[0] as string) ?? {} };
    throw new OperationError(
      `Stack ${stack} holds ${paths.length} email pipelines: ${list}. Say which with ${choose}: its path or the path's last part.`,
    );
  }
  const exact = pipelines.get(wanted);
  if (exact) return { path: wanted, outputs: exact };
  const byName = paths.filter((at) => lastPart(at) === wanted);
  if (byName.length === 1) {
    const at = byName[0] as string;
    return { path: at, outputs: pipelines.get(at) ?? {} };
  }
  if (byName.length > 1) {
    throw new OperationError(
      `"${wanted}" names ${byName.length} pipelines of stack ${stack}: ${byName.join(', ')}. Give the whole path, e.g. --pipeline ${byName[0] ?? ''}.`,
    );
  }
  const known = [...new Set([...paths, ...paths.map(lastPart)])];
  throw new OperationError(
    `Stack ${stack} holds no pipeline "${wanted}"${suggestion(wanted, known)}; it holds: ${list}.`,
  );
}

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
