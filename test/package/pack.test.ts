/**
 * The package as a platform team meets it: `npm pack`, then a new CDK app outside this
 * repository installs the tarball with only aws-cdk-lib and constructs beside it (no esbuild,
 * no tsx, no TypeScript sources), imports the construct by the package's name, type-checks
 * against the shipped .d.ts and synthesizes. The function's code must be the pre-built
 * JavaScript bundle.
 *
 * The tarball is built from the current sources first (what prepack runs), so a stale dist/
 * cannot make this pass.
 *
 * The app runs on the oldest Node major the package claims in `engines` and on the one the
 * repository runs on (the `node` devDependency, the Lambda runtime's), each the official
 * binary from the registry's `node` package installed in this test's own folder, first in
 * PATH: so `node` and the CLI's `#!/usr/bin/env node` both find it, not the machine's Node.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startStandIn } from './cloudformation-stand-in';

const ROOT = path.join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
  repository?: { url?: string };
  homepage?: string;
  bugs?: { url?: string };
  engines: { node: string };
  devDependencies: Record<string, string>;
};

/** The oldest major `engines.node` (">=N") admits. */
function oldestClaimedMajor(range: string): number {
  const match = /^>=\s*(\d+)(?:\.0\.0)?$/.exec(range.trim());
  if (!match) throw new Error(`engines.node "${range}" is not of the form ">=N" this test knows`);
  return Number(match[1]);
}

const OLDEST_MAJOR = oldestClaimedMajor(manifest.engines.node);
const OWN_NODE = manifest.devDependencies.node ?? '';

/**
 * Each Node the app runs on, with the `node` package version to install: the newest release of
 * the oldest major `engines` claims, and the repository's own (the Lambda runtime's major).
 */
const NODES: ReadonlyArray<{ readonly major: number; readonly spec: string }> = [
  { major: OLDEST_MAJOR, spec: String(OLDEST_MAJOR) },
  { major: Number(OWN_NODE.split('.')[0]), spec: OWN_NODE },
];

let work: string;
let tarball: string;
let files: string[];
let app: string;

const BASE_ENV = { ...process.env, npm_config_update_notifier: 'false', CDK_DISABLE_VERSION_CHECK: '1' };

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = BASE_ENV): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env });
}

/** Installs the registry's `node@<spec>` into its own folder; returns that folder's .bin. */
function installNode(spec: string): string {
  const dir = path.join(work, `node-${spec}`);
  fs.mkdirSync(dir);
  // The binary comes from the package's install script, which allowScripts lets run.
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'node-runtime', private: true, dependencies: { node: spec }, allowScripts: { node: true } }),
  );
  run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  return path.join(dir, 'node_modules', '.bin');
}

/** The environment of a process that runs on the Node in `bin` (first in PATH). */
function onNode(bin: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...BASE_ENV, ...extra, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
}

const nodeBins = new Map<number, string>();

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'package-test-'));
  // What prepack runs, first, so that its output stays out of npm pack's JSON.
  run(TSX, [path.join(ROOT, 'tools', 'build', 'build.ts'), '--no-check'], ROOT);
  const packed = JSON.parse(run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const [info] = packed;
  if (!info) throw new Error('npm pack reported no tarball');
  tarball = path.join(work, info.filename);
  files = info.files.map((f) => f.path);

  app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({
      name: 'platform-app',
      private: true,
      dependencies: {
        [manifest.name]: `file:${tarball}`,
        'aws-cdk-lib': manifest.devDependencies['aws-cdk-lib'],
        constructs: manifest.devDependencies.constructs,
      },
    }),
  );
  run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], app);
  for (const { major, spec } of NODES) nodeBins.set(major, installNode(spec));
}, 300_000);

function nodeBin(major: number): string {
  const bin = nodeBins.get(major);
  if (!bin) throw new Error(`Node ${major} was not installed`);
  return bin;
}

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('the tarball ships JavaScript, declarations and the pre-built handler, and no TypeScript sources', () => {
  expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  expect(files).toEqual(
    expect.arrayContaining([
      'package.json',
      'dist/lib/index.js',
      'dist/lib/index.d.ts',
      'dist/assets/send-email/index.js',
      'dist/lib/publisher.d.ts',
      'schema/email-message.schema.json',
      'CHANGELOG.md',
      'LICENSE',
      'publisher/package.json',
      'dist/lib/publisher.js',
    ]),
  );
  // Development tools stay in the repository.
  expect(files.filter((f) => /(^|\/)(test|tools|bench|local)\//.test(f))).toEqual([]);
});

test('a new app installs it with only aws-cdk-lib and constructs: no esbuild, no lockfile of ours', () => {
  const installed = path.join(app, 'node_modules', manifest.name);
  expect(fs.existsSync(path.join(installed, 'package.json'))).toBe(true);
  expect(fs.existsSync(path.join(app, 'node_modules', 'esbuild'))).toBe(false);
  expect(fs.existsSync(path.join(installed, 'package-lock.json'))).toBe(false);
});

const PUBLISHER_SCRIPT = `
const { checkEmail, InvalidMessageError } = require('${manifest.name}');
checkEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hello' });
try {
  checkEmail({ to: 'nobody', subject: 'Hi', text: 'Hello' });
} catch (error) {
  if (error instanceof InvalidMessageError) process.stdout.write(error.issues[0].field);
}
`;

/** The platform team's app, as TypeScript (the output folder comes from CDK_OUTDIR, as the CDK CLI sets it). */
const APP_SOURCE = `
import { App } from 'aws-cdk-lib';
import { EmailPipelineStack, type EmailPipelineProps } from '${manifest.name}';

const pipeline: EmailPipelineProps = { senderAddress: 'noreply@mail.example.org', sesIdentity: 'mail.example.org' };
// The CDK CLI turns asset metadata on; so does this app, to find the function's asset.
const app = new App({ context: { 'aws:cdk:enable-asset-metadata': true } });
new EmailPipelineStack(app, 'Mail', { pipeline });
app.synth();
`;

/** The same program as JavaScript, as `cdk synth` would run a JS app. */
const APP_JS = APP_SOURCE.replace(/^import \{ App \} from 'aws-cdk-lib';$/m, "const { App } = require('aws-cdk-lib');")
  .replace(/^import \{ EmailPipelineStack.*$/m, `const { EmailPipelineStack } = require('${manifest.name}');`)
  .replace('const pipeline: EmailPipelineProps =', 'const pipeline =');

test('the app imports the construct by name and type-checks against the .d.ts', () => {
  fs.writeFileSync(path.join(app, 'app.ts'), APP_SOURCE);
  expect(() =>
    run(
      process.execPath,
      [
        TSC,
        '--strict',
        '--noEmit',
        '--skipLibCheck',
        '--module',
        'commonjs',
        '--moduleResolution',
        'node',
        '--target',
        'es2022',
        'app.ts',
      ],
      app,
    ),
  ).not.toThrow();
});

describe.each(NODES)('on Node $major (the registry’s node@$spec)', ({ major }) => {
  test('`node` in the app’s PATH is that Node', () => {
    const version = run('node', ['-p', 'process.versions.node'], app, onNode(nodeBin(major))).trim();
    expect(version.split('.')[0]).toBe(String(major));
  });

  test('the publisher client loads from the installed package and checks a message with the contract', () => {
    expect(run('node', ['-e', PUBLISHER_SCRIPT], app, onNode(nodeBin(major)))).toBe('to');
  });

  test('the app synthesizes a JavaScript asset for each function', () => {
    const script = path.join(app, 'app.js');
    fs.writeFileSync(script, APP_JS);
    const outdir = path.join(app, `cdk.out.node${major}`);
    run('node', [script], app, onNode(nodeBin(major), { CDK_OUTDIR: outdir }));

    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'Mail.template.json'), 'utf8')) as {
      Resources: Record<
        string,
        { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, string> }
      >;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    // The send function, the ledger function and the status function.
    expect(functions.length).toBeGreaterThanOrEqual(3);
    const sendsEmail = functions.filter((fn) =>
      fs
        .readFileSync(path.join(outdir, fn.Metadata?.['aws:asset:path'] ?? '', 'index.js'), 'utf8')
        .includes('"SendEmail"'),
    );
    expect(sendsEmail).toHaveLength(1);
    for (const fn of functions) {
      expect(fn.Properties.Handler).toBe('index.handler');
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      const assetPath = fn.Metadata?.['aws:asset:path'];
      expect(assetPath).toMatch(/^asset\./);
      const code = fs.readFileSync(path.join(outdir, assetPath ?? '', 'index.js'), 'utf8');
      // CommonJS with its SDK clients and Powertools inside (nothing left to resolve), not TypeScript;
      // without the SDK's default credential chain (its SSO step logs this line) and without the
      // schemas of SES operations no handler calls (docs/design.md, "What the package ships").
      expect({
        commonJs: code.startsWith('"use strict";'),
        esmImports: /^\s*import .* from /m.test(code),
        requiresDependencies: /require\(["'](@aws-sdk\/(client-|lib-)|@smithy\/|@aws-lambda-powertools\/)/.test(code),
        sdkDefaultCredentialChain: code.includes('defaultProvider::fromSSO'),
        unusedSesSchemas: code.includes('CreateContactList'),
      }).toEqual({
        commonJs: true,
        esmImports: false,
        requiresDependencies: false,
        sdkDefaultCredentialChain: false,
        unusedSesSchemas: false,
      });
    }
  });

  test("the operator CLI is on the app's PATH and follows the exit-code convention", () => {
    const bin = path.join(app, 'node_modules', '.bin', 'email-pipeline');
    const help = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8', env: onNode(nodeBin(major)) });
    expect({ status: help.status, stderr: help.stderr }).toEqual({ status: 0, stderr: '' });
    expect(help.stdout).toContain('dlq');
    const none = spawnSync(bin, ['dlq', 'list'], {
      cwd: app,
      encoding: 'utf8',
      env: onNode(nodeBin(major), { LOCAL_STATE_DIR: '' }),
    });
    expect(none.status).toBe(1);
    // Outside this repository: a deployed stack is what to name, not npm start.
    expect(none.stderr).toContain('No pipeline named: pass --stack NAME (or set EMAIL_PIPELINE_STACK)');
    expect(none.stderr).not.toContain('npm start');
  });

  test('status, pause, resume, deliveries and resend load from the installed package (their dependencies are its own)', () => {
    const bin = path.join(app, 'node_modules', '.bin', 'email-pipeline');
    for (const name of ['status', 'pause', 'resume', 'deliveries', 'resend']) {
      const help = spawnSync(bin, [name, '--help'], { cwd: app, encoding: 'utf8', env: onNode(nodeBin(major)) });
      expect({ name, status: help.status, stderr: help.stderr }).toEqual({ name, status: 0, stderr: '' });
      expect(help.stdout).toContain(`Usage: email-pipeline ${name}`);
    }
    // Past the usage, a command runs far enough to look for its pipeline: every module it needs loads.
    const none = spawnSync(bin, ['deliveries', '--outcome', 'bounced'], {
      cwd: app,
      encoding: 'utf8',
      env: onNode(nodeBin(major), { LOCAL_STATE_DIR: '' }),
    });
    expect({ status: none.status, stderr: none.stderr }).toEqual({
      status: 1,
      stderr: expect.stringContaining('No pipeline named'),
    });
  });
});

describe('package hygiene', () => {
  /**
   * Scripts npm runs by itself around publish, install, version or pack (npm's "Life Cycle Scripts");
   * `prepack` builds the tarball on purpose, and `start`/`test` run only when asked.
   */
  const LIFECYCLE = [
    'publish',
    'prepublish',
    'prepublishOnly',
    'postpublish',
    'preinstall',
    'install',
    'postinstall',
    'preuninstall',
    'uninstall',
    'postuninstall',
    'preversion',
    'version',
    'postversion',
    'prepare',
    'dependencies',
    'postpack',
  ];

  test('no script is named like an npm life-cycle event it would then run unasked', () => {
    expect(Object.keys(manifest.scripts).filter((name) => LIFECYCLE.includes(name))).toEqual([]);
  });

  test('the manifest names its repository, home page and issue tracker', () => {
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.bugs?.url).toMatch(/^https:\/\/.*\/issues$/);
  });

  test('the tarball ships the Apache-2.0 licence its manifest claims', () => {
    const text = fs.readFileSync(path.join(app, 'node_modules', manifest.name, 'LICENSE'), 'utf8');
    expect(text).toContain('Apache License');
    expect(text).toContain('Version 2.0, January 2004');
  });
});

/** A platform team's own stack with two pipelines and the monitoring of one (TypeScript). */
const USER_STACK_SOURCE = `
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { EmailPipeline, EmailPipelineMonitoring } from '${manifest.name}';

const app = new App({ context: { 'aws:cdk:enable-asset-metadata': true } });
const stack = new Stack(app, 'MailStack');
const billing = new EmailPipeline(stack, 'Billing', {
  senderAddress: 'billing@mail.example.org',
  sesIdentity: 'mail.example.org',
  statusReservedConcurrency: 0,
});
billing.grantPublish(new iam.ArnPrincipal('arn:aws:iam::111122223333:role/orders'));
new EmailPipelineMonitoring(stack, 'BillingMonitoring', { pipeline: billing });
new EmailPipeline(stack, 'Security', {
  senderAddress: 'security@mail.example.org',
  sesIdentity: 'mail.example.org',
  idempotencyKeyPrefix: 'security',
  callbackUrl: 'https://hooks.example.org/email',
  teams: {
    alerts: { senders: ['alerts@mail.example.org'], rateSharePercent: 60 },
    audit: { senders: ['audit@mail.example.org'] },
  },
});
app.synth();
`;

const PUBLISHER_ONLY = `
const before = new Set(Object.keys(require.cache));
const { EmailPublisher, checkEmail } = require('${manifest.name}/publisher');
if (typeof EmailPublisher !== 'function' || typeof checkEmail !== 'function') throw new Error('exports missing');
const loaded = Object.keys(require.cache).filter((m) => !before.has(m));
process.stdout.write(JSON.stringify({
  modules: loaded.length,
  cdk: loaded.filter((m) => m.includes('aws-cdk-lib') || m.includes('/constructs/')).length,
}));
`;

describe('in a user stack (on the repository’s Node)', () => {
  const own = () => onNode(nodeBin(Number(OWN_NODE.split('.')[0])));
  let outdir: string;

  beforeAll(() => {
    fs.writeFileSync(path.join(app, 'user-stack.ts'), USER_STACK_SOURCE);
    run(
      process.execPath,
      [
        TSC,
        '--strict',
        '--skipLibCheck',
        '--module',
        'commonjs',
        '--moduleResolution',
        'node',
        '--target',
        'es2022',
        'user-stack.ts',
      ],
      app,
    );
    outdir = path.join(app, 'cdk.out.user');
    run('node', [path.join(app, 'user-stack.js')], app, { ...own(), CDK_OUTDIR: outdir });
  }, 120_000);

  test('two pipelines in one user stack synthesize, each with its own endpoints output', () => {
    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'MailStack.template.json'), 'utf8')) as {
      Outputs: Record<string, { Value: unknown; Description?: string }>;
    };
    const described = Object.values(template.Outputs).map((o) => o.Description ?? '');
    expect(described.filter((d) => d.startsWith('Endpoints of the email pipeline')).sort()).toEqual([
      expect.stringContaining('Billing'),
      expect.stringContaining('Security'),
    ]);
    expect(
      described.some((d) => d.startsWith('Alarm topics and alarm name prefix of the email pipeline Billing')),
    ).toBe(true);
  });

  test("a pipeline with a callback: its function's asset is the installed package's, its secret generated, Callbacks in its endpoints", () => {
    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'MailStack.template.json'), 'utf8')) as {
      Resources: Record<
        string,
        { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown> }
      >;
      Outputs: Record<string, { Value: unknown; Description?: string }>;
    };
    const functions = Object.values(template.Resources).filter(
      (r) =>
        r.Type === 'AWS::Lambda::Function' &&
        JSON.stringify(r.Properties?.Environment ?? {}).includes('CALLBACK_TARGETS'),
    );
    expect(functions).toHaveLength(1);
    const asset = String(functions[0]!.Metadata?.['aws:asset:path'] ?? '');
    expect(fs.existsSync(path.join(outdir, asset, 'index.js'))).toBe(true);
    const secrets = Object.values(template.Resources).filter((r) => r.Type === 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    expect(JSON.stringify(secrets[0]!.Properties)).toContain('GenerateSecretString');
    const endpoints = Object.values(template.Outputs).filter((o) =>
      (o.Description ?? '').startsWith('Endpoints of the email pipeline'),
    );
    expect(endpoints.filter((o) => JSON.stringify(o.Value).includes('Callbacks'))).toHaveLength(1);
  });

  test("a pipeline with teams: each team's topic feeds a queue of its own, mapped at the team's share of the concurrency", () => {
    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'MailStack.template.json'), 'utf8')) as {
      Resources: Record<
        string,
        {
          Type: string;
          Properties?: {
            QueueName?: string;
            EventSourceArn?: unknown;
            ScalingConfig?: { MaximumConcurrency?: number };
          };
        }
      >;
    };
    const queues = Object.entries(template.Resources).filter(
      ([, r]) => r.Type === 'AWS::SQS::Queue' && /-t-(alerts|audit)$/.test(String(r.Properties?.QueueName ?? '')),
    );
    expect(queues.map(([, r]) => String(r.Properties?.QueueName).replace(/.*-t-/, '')).sort()).toEqual([
      'alerts',
      'audit',
    ]);
    const concurrency = (team: string) => {
      const [id] = queues.find(([, r]) => String(r.Properties?.QueueName).endsWith(`-t-${team}`))!;
      const mapping = Object.values(template.Resources).find(
        (r) =>
          r.Type === 'AWS::Lambda::EventSourceMapping' &&
          JSON.stringify(r.Properties?.EventSourceArn) === JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }),
      );
      return mapping?.Properties?.ScalingConfig?.MaximumConcurrency;
    };
    // maxConcurrency 10: alerts 60 %, audit what is left (40 %).
    expect([concurrency('alerts'), concurrency('audit')]).toEqual([6, 4]);
  });

  /** The installed CLI against the stand-in for CloudFormation and DynamoDB (a child process: the stand-in answers meanwhile). */
  function installedCli(
    args: readonly string[],
    endpoint: string,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const bin = path.join(app, 'node_modules', '.bin', 'email-pipeline');
    return new Promise((resolve) => {
      execFile(
        bin,
        [...args],
        {
          cwd: app,
          encoding: 'utf8',
          env: {
            ...own(),
            AWS_REGION: 'us-east-1',
            AWS_ACCESS_KEY_ID: 'AKIDSTANDIN',
            AWS_SECRET_ACCESS_KEY: 'stand-in',
            AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint,
            AWS_ENDPOINT_URL_DYNAMODB: endpoint,
            EMAIL_PIPELINE_STACK: '',
            EMAIL_PIPELINE_NAME: '',
          },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  test("the installed CLI finds each pipeline of the user's stack by --pipeline, from CloudFormation's answer", async () => {
    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'MailStack.template.json'), 'utf8'));
    const standIn = await startStandIn({ MailStack: template });
    try {
      // Two pipelines and none named: exit 1, naming both, before any table is read.
      const unnamed = await installedCli(['status', 'order-42', '--stack', 'MailStack'], standIn.endpoint);
      expect(unnamed.code).toBe(1);
      expect(unnamed.stderr).toMatch(/Billing.*Security/);
      expect(standIn.tablesRead).toEqual([]);

      // Named: the status lookup reads that pipeline's own tables, and only them.
      const tableOf = (pipeline: string) =>
        JSON.stringify(
          (template.Outputs as Record<string, { Value: unknown; Description?: string }>)[
            Object.keys(template.Outputs).find((k) =>
              String(template.Outputs[k].Description).startsWith(`Endpoints of the email pipeline ${pipeline} `),
            ) ?? ''
          ]?.Value,
        );
      for (const pipeline of ['Security', 'Billing']) {
        standIn.tablesRead.length = 0;
        const named = await installedCli(
          ['status', 'order-42', '--stack', 'MailStack', '--pipeline', pipeline, '--json'],
          standIn.endpoint,
        );
        expect({ code: named.code, stderr: named.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(named.stdout)).toMatchObject({ key: 'order-42', status: 'unknown' });
        expect(standIn.tablesRead.length).toBeGreaterThan(0);
        for (const table of standIn.tablesRead) expect(tableOf(pipeline)).toContain(table.replace(/^ref-/, ''));
      }
      // A stack that does not exist: what CloudFormation said.
      const missing = await installedCli(['status', 'order-42', '--stack', 'NoSuchStack'], standIn.endpoint);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('does not exist');
    } finally {
      await standIn.close();
    }
  });

  test('no alarm description links the npm page; each links its runbook in the operators’ guide', () => {
    const template = fs.readFileSync(path.join(outdir, 'MailStack.template.json'), 'utf8');
    expect(template).not.toContain('npmjs.com');
    expect(template).toContain(`/blob/v${manifest.version}/docs/operators.md#alarm-`);
  });

  test('the ./publisher entry loads the client and no aws-cdk-lib module', () => {
    const loaded = JSON.parse(run('node', ['-e', PUBLISHER_ONLY], app, own())) as { modules: number; cdk: number };
    expect(loaded.cdk).toBe(0);
    expect(loaded.modules).toBeGreaterThan(0);
  });

  test('./publisher type-checks with node10 and node16 module resolution', () => {
    fs.writeFileSync(
      path.join(app, 'publish-only.ts'),
      `import { EmailPublisher, type EmailMessageInput } from '${manifest.name}/publisher';\n` +
        `const m: EmailMessageInput = { to: 'a@example.com', subject: 's', text: 't' };\n` +
        `export const p = new EmailPublisher({ topicArn: 'arn:aws:sns:us-east-1:111122223333:t' });\nvoid m;\n`,
    );
    for (const [module, resolution] of [
      ['commonjs', 'node'],
      ['node16', 'node16'],
    ]) {
      expect(() =>
        run(
          process.execPath,
          [
            TSC,
            '--strict',
            '--noEmit',
            '--skipLibCheck',
            '--module',
            module ?? '',
            '--moduleResolution',
            resolution ?? '',
            'publish-only.ts',
          ],
          app,
        ),
      ).not.toThrow();
    }
  });

  test('email-pipeline --version prints the package’s version', () => {
    const bin = path.join(app, 'node_modules', '.bin', 'email-pipeline');
    const version = spawnSync(bin, ['--version'], { cwd: app, encoding: 'utf8', env: own() });
    expect({ status: version.status, stdout: version.stdout.trim() }).toEqual({ status: 0, stdout: manifest.version });
  });
});
