/**
 * Every AWS call a function's code can make is allowed by its role. DynamoDB Local and the other
 * emulators enforce no IAM, so a grant that lags behind the code (the ledger's conditional PutItem
 * once did) shows only in AWS. For each bundle of lib/construct/bundling.ts, esbuild (with the
 * options `npm run build` uses) tells which files are in it; from the project's own files among
 * them, and from Powertools' DynamoDB persistence layer (the idempotency store's calls), the test
 * collects the SDK commands constructed (`new XxxCommand(`) or imported as values, each with the
 * client package it comes from, turns each into its IAM action, and checks that an Allow statement
 * on the function's role, in the template of a stack that creates every function, names it.
 *
 * What is checked is the action only, not the resource or the conditions: a command the role
 * allows on one table passes even if the code sends it to another. Files are taken whole: a
 * command of a bundled file counts even where the function never reaches the code that sends it.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { tmpdir } from 'node:os';
import { build as esbuild } from 'esbuild';
import type { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { LAMBDA_ENTRIES, type LambdaName } from '../../../../lib/construct/bundling';
import { lambdaBuildOptions } from '../../../../tools/build/lambda-bundle';
import { functionPolicyStatements, synthesize, type Synthesized } from '../../helpers';

const ROOT = path.join(__dirname, '..', '..', '..', '..');

/** IAM service prefix of each SDK client package a function may import commands from. */
const SERVICE_OF_PACKAGE: Readonly<Record<string, string>> = {
  '@aws-sdk/client-cloudformation': 'cloudformation',
  '@aws-sdk/client-cloudwatch': 'cloudwatch',
  '@aws-sdk/client-cloudwatch-logs': 'logs',
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/lib-dynamodb': 'dynamodb',
  '@aws-sdk/client-eventbridge': 'events',
  '@aws-sdk/client-kms': 'kms',
  '@aws-sdk/client-lambda': 'lambda',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-scheduler': 'scheduler',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
  '@aws-sdk/client-ses': 'ses',
  '@aws-sdk/client-sesv2': 'ses',
  '@aws-sdk/client-sns': 'sns',
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-sts': 'sts',
};

/**
 * Operations whose IAM action is not `service:Operation`. A batch call is authorized as its single
 * action; S3 authorizes a HEAD as a GET; the DynamoDB document client's commands are named after
 * the item operations they send (TransactGet/TransactWrite, which IAM checks per item, are left
 * out on purpose: the test refuses them until someone lists what they need).
 */
const ACTIONS_OF_OPERATION: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  '@aws-sdk/client-sqs': {
    SendMessageBatch: ['sqs:SendMessage'],
    DeleteMessageBatch: ['sqs:DeleteMessage'],
    ChangeMessageVisibilityBatch: ['sqs:ChangeMessageVisibility'],
  },
  '@aws-sdk/client-sns': { PublishBatch: ['sns:Publish'] },
  '@aws-sdk/client-s3': {
    HeadObject: ['s3:GetObject'],
    HeadBucket: ['s3:ListBucket'],
    ListObjectsV2: ['s3:ListBucket'],
    DeleteObjects: ['s3:DeleteObject'],
    CopyObject: ['s3:GetObject', 's3:PutObject'],
    CreateMultipartUpload: ['s3:PutObject'],
    UploadPart: ['s3:PutObject'],
    CompleteMultipartUpload: ['s3:PutObject'],
  },
  '@aws-sdk/client-lambda': { Invoke: ['lambda:InvokeFunction'] },
  '@aws-sdk/lib-dynamodb': {
    Get: ['dynamodb:GetItem'],
    Put: ['dynamodb:PutItem'],
    Update: ['dynamodb:UpdateItem'],
    Delete: ['dynamodb:DeleteItem'],
    BatchGet: ['dynamodb:BatchGetItem'],
    BatchWrite: ['dynamodb:BatchWriteItem'],
    Query: ['dynamodb:Query'],
    Scan: ['dynamodb:Scan'],
  },
};

/** Operations with no single IAM action (checked per item or per statement): list them above before use. */
const NO_SINGLE_ACTION = new Set([
  'TransactGetItems',
  'TransactWriteItems',
  'TransactGet',
  'TransactWrite',
  'ExecuteStatement',
  'BatchExecuteStatement',
  'ExecuteTransaction',
]);

/**
 * Project files that call AWS without an SDK client: requests signed by hand with
 * `@smithy/signature-v4`. Every bundled file that builds a SignatureV4 must be listed here with
 * the IAM actions of its requests.
 */
const SIGNED_REQUESTS: Readonly<Record<string, readonly string[]>> = {
  // HeadObject and GetObject (If-Match) of the attachments bucket: S3 authorizes both as s3:GetObject.
  'lambdas/send-email/send/s3-store.ts': ['s3:GetObject'],
};

/*
 * No exclusions are needed: the functions' credentials come from the environment or a container
 * endpoint (lambdas/runtime/lambda-credentials.ts, in place of the SDK's default chain), which is
 * no AWS API call a role must allow, and the SDK's own code (node_modules, Powertools' persistence
 * layer aside) is not scanned.
 */

/** Powertools' DynamoDB persistence layer: the idempotency store's PutItem, GetItem, UpdateItem and DeleteItem. */
const POWERTOOLS_PERSISTENCE =
  /node_modules[/\\]@aws-lambda-powertools[/\\]idempotency[/\\].*[/\\]persistence[/\\]DynamoDBPersistenceLayer\.js$/;

/** What one scanned file can call: IAM action -> the commands (or requests) that need it. */
type Calls = Map<string, Set<string>>;

function add(calls: Calls, action: string, origin: string): void {
  if (!calls.has(action)) calls.set(action, new Set());
  calls.get(action)!.add(origin);
}

/** The IAM actions of `Operation` (a command class without its `Command` suffix) of `pkg`. */
function actionsOf(pkg: string, operation: string, where: string): readonly string[] {
  const service = SERVICE_OF_PACKAGE[pkg];
  if (service === undefined) throw new Error(`${where}: ${operation}Command from ${pkg}, whose IAM service is unknown`);
  const listed = ACTIONS_OF_OPERATION[pkg]?.[operation];
  if (listed !== undefined) return listed;
  if (NO_SINGLE_ACTION.has(operation) || pkg === '@aws-sdk/lib-dynamodb') {
    throw new Error(`${where}: no IAM action listed for ${operation}Command of ${pkg}`);
  }
  return [`${service}:${operation}`];
}

/** The SDK commands of one source file (TypeScript or ES module), as IAM actions. */
function callsOfSource(file: string, source: string, calls: Calls): void {
  // Local name -> [package, exported name], for named imports; local namespace -> package.
  const named = new Map<string, readonly [string, string]>();
  const namespaces = new Map<string, string>();
  for (const m of source.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g)) {
    if (m[1] !== undefined) continue; // `import type { ... }`: no value
    for (const part of m[2].split(',')) {
      const spec = part.trim();
      if (spec === '' || spec.startsWith('type ')) continue;
      const [exported, local = exported] = spec.split(/\s+as\s+/).map((s) => s.trim());
      named.set(local, [m[3], exported]);
    }
  }
  for (const m of source.matchAll(/import\s+\*\s+as\s+(\w+)\s+from\s*['"]([^'"]+)['"]/g)) namespaces.set(m[1], m[2]);

  const command = (pkg: string, exported: string, where: string) => {
    const operation = exported.replace(/Command$/, '');
    for (const action of actionsOf(pkg, operation, where)) add(calls, action, `${exported} (${where})`);
  };
  // Constructed commands, wherever their class comes from.
  for (const m of source.matchAll(/new\s+(?:(\w+)\.)?(\w+Command)\s*\(/g)) {
    const where = path.basename(file);
    if (m[1] !== undefined) {
      const pkg = namespaces.get(m[1]);
      if (pkg === undefined) throw new Error(`${file}: new ${m[1]}.${m[2]}( of no imported namespace`);
      command(pkg, m[2], where);
      continue;
    }
    const imported = named.get(m[2]);
    if (imported === undefined) throw new Error(`${file}: new ${m[2]}( of a class not imported from an SDK package`);
    command(imported[0], imported[1], where);
  }
  // A command class imported as a value may be handed to a helper that constructs it: it counts too.
  for (const [, [pkg, exported]] of named) {
    if (pkg.startsWith('@aws-sdk/') && /\wCommand$/.test(exported)) command(pkg, exported, path.basename(file));
  }
}

/** The files of a function's bundle, relative to the project (or resolved, for node_modules). */
async function bundledFiles(name: LambdaName): Promise<string[]> {
  const outfile = path.join(tmpdir(), 'function-permissions', name, 'index.js');
  const result = await esbuild({
    ...lambdaBuildOptions(LAMBDA_ENTRIES[name], outfile),
    absWorkingDir: ROOT,
    metafile: true,
    write: false,
  });
  const outputs = Object.values(result.metafile.outputs).filter((o) => o.entryPoint !== undefined);
  if (outputs.length !== 1) throw new Error(`${name}: expected one bundle, found ${outputs.length}`);
  // The files whose code is in the bundle (tree shaking may keep none of an imported one).
  return Object.entries(outputs[0].inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([file]) => file);
}

/** The IAM actions one function's code can need, each with the commands that need it. */
async function callsOf(name: LambdaName): Promise<{ calls: Calls; scanned: string[] }> {
  const calls: Calls = new Map();
  const scanned: string[] = [];
  for (const file of await bundledFiles(name)) {
    const own = /^lambdas\//.test(file);
    if (!own && !POWERTOOLS_PERSISTENCE.test(file)) continue;
    scanned.push(own ? file : 'powertools:DynamoDBPersistenceLayer');
    const source = readFileSync(path.resolve(ROOT, file), 'utf8');
    callsOfSource(file, source, calls);
    if (/\bnew\s+SignatureV4\s*\(/.test(source)) {
      const actions = SIGNED_REQUESTS[file];
      if (actions === undefined) throw new Error(`${file} signs its own AWS requests: list their IAM actions`);
      for (const action of actions) add(calls, action, `signed request (${path.basename(file)})`);
    }
  }
  return { calls, scanned };
}

/** Whether an Allow statement names `action` (exactly, or by a `*` pattern). */
function allows(statements: Array<Record<string, any>>, action: string): boolean {
  const matches = (pattern: string) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);
  return statements.some((s) => s.Effect === 'Allow' && ([] as string[]).concat(s.Action ?? []).some(matches));
}

/** The function of each bundle in a stack that has them all (the reputation pause and the callbacks are optional). */
function functionsOf(s: Synthesized): Record<LambdaName, IConstruct> {
  const p = s.stack.pipeline;
  const pause = s.stack.monitoring?.pauseFunction;
  if (pause === undefined) throw new Error('the stack has no reputation pause function');
  if (p.callbacks === undefined) throw new Error('the stack has no callbacks');
  return {
    'send-email': p.sendFunction,
    ledger: p.ledger.ledgerFunction,
    status: p.ledger.statusFunction,
    cancel: p.ledger.cancelFunction,
    'reputation-pause': pause,
    schedule: p.scheduleFunction,
    callbacks: p.callbacks.callbackFunction,
  };
}

const NAMES = Object.keys(LAMBDA_ENTRIES) as LambdaName[];

describe('each function may make every AWS call its code makes', () => {
  let s: Synthesized;
  const derived = new Map<LambdaName, { calls: Calls; scanned: string[] }>();

  beforeAll(async () => {
    // Attachments are always on (the bucket exists in every pipeline); the pause and the callbacks are opt-in.
    s = synthesize({ callbackUrl: 'https://hooks.example.com/email' }, undefined, {
      monitoring: { pauseSendingOnReputation: true },
    });
    for (const name of NAMES) derived.set(name, await callsOf(name));
  }, 120_000);

  test('derives the calls of each bundle', () => {
    const actions = Object.fromEntries(NAMES.map((name) => [name, [...derived.get(name)!.calls.keys()].sort()]));
    // What the derivation finds today: a change here is a new (or dropped) AWS call to review.
    expect(actions).toEqual({
      'send-email': [
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        's3:GetObject',
        'ses:SendEmail',
        'sqs:ChangeMessageVisibility',
        'sqs:SendMessage',
      ],
      ledger: [
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'sns:GetTopicAttributes',
        'sns:Publish',
      ],
      status: ['dynamodb:GetItem'],
      cancel: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      'reputation-pause': ['ses:PutConfigurationSetSendingOptions'],
      schedule: ['sqs:SendMessage'],
      callbacks: [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'secretsmanager:GetSecretValue',
        'sqs:ChangeMessageVisibility',
        'sqs:SendMessage',
      ],
    });
    // The idempotency store's calls are Powertools' own, found in its persistence layer.
    expect(derived.get('send-email')!.scanned).toContain('powertools:DynamoDBPersistenceLayer');
    expect([...derived.get('send-email')!.calls.get('dynamodb:DeleteItem')!]).toEqual([
      'DeleteItemCommand (DynamoDBPersistenceLayer.js)',
    ]);
  });

  test.each(NAMES)('%s: its role allows every action its code needs', (name) => {
    const fn = functionsOf(s)[name];
    const statements = functionPolicyStatements(s.template, s.stack.getLogicalId(fn.node.defaultChild as CfnResource));
    const missing = [...derived.get(name)!.calls]
      .filter(([action]) => !allows(statements, action))
      .map(([action, origins]) => `${action} (${[...origins].join(', ')})`);
    expect(missing).toEqual([]);
  });
});
