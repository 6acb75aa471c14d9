/**
 * Which pipeline a command talks to: the local one (`npm start` writes its endpoints to
 * `.local/outputs.json`, or `$LOCAL_STATE_DIR/outputs.json`) or a deployed stack (`--stack NAME`:
 * its CloudFormation outputs, with the usual AWS region and credentials, or `--region`).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { awsFailure, OperationError } from './errors';

/** Region and credentials of the local emulators (any values work; these are the ones npm start uses). */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** The account of the local resources (the emulators' ARNs, the local SES's `sendingAccountId`). */
export const LOCAL_ACCOUNT_ID = '000000000000';

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
  /** `local (<dir>)` or `stack <name>`: said in what the commands print. */
  readonly description: string;
  readonly local: boolean;
  /** Stack outputs (TopicArn, QueueUrl, DeadLetterQueueUrl, ...). */
  readonly outputs: Readonly<Record<string, string>>;
  readonly clients: { readonly sns: ClientSettings; readonly sqs: ClientSettings; readonly dynamodb: ClientSettings };
}

export interface TargetOptions {
  readonly stack?: string | undefined;
  readonly region?: string | undefined;
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

async function localTarget(): Promise<Target> {
  const dir = localStateDir();
  const file = path.join(dir, 'outputs.json');
  if (!existsSync(file)) {
    throw new OperationError(
      `No local pipeline found (${file} is missing). Start one with npm start, or pass --stack NAME for a deployed stack.`,
    );
  }
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

async function stackTarget(stack: string, region: string | undefined): Promise<Target> {
  const regional: ClientSettings = region ? { region } : {};
  const cloudFormation = new CloudFormationClient(regional);
  try {
    const { Stacks = [] } = await cloudFormation
      .send(new DescribeStacksCommand({ StackName: stack }))
      .catch(regionAdvice)
      .catch((error: unknown) => {
        throw awsFailure(`Could not read the outputs of stack ${stack}`, error);
      });
    const outputs = Object.fromEntries(
      (Stacks[0]?.Outputs ?? []).flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
    );
    return {
      description: `stack ${stack}`,
      local: false,
      outputs,
      clients: { sns: regional, sqs: regional, dynamodb: regional },
    };
  } finally {
    cloudFormation.destroy();
  }
}

/** Resolves the target of a command: `--stack` when given, else the local pipeline. */
export function resolveTarget(options: TargetOptions): Promise<Target> {
  return options.stack ? stackTarget(options.stack, options.region) : localTarget();
}

/** One output of the target, or an error naming the stack and the missing output. */
export function output(target: Target, name: string): string {
  const value = target.outputs[name];
  if (!value) throw new OperationError(`${target.description} has no ${name} output: is it an email pipeline stack?`);
  return value;
}
