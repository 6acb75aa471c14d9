/**
 * The package as a platform team meets it: `npm pack`, then a new CDK app outside this
 * repository installs the tarball with only aws-cdk-lib and constructs beside it (no esbuild,
 * no tsx, no TypeScript sources), imports the construct by the package's name, type-checks
 * against the shipped .d.ts and synthesizes. The function's code must be the pre-built
 * JavaScript bundle.
 *
 * The tarball is built from the current sources first (what prepack runs), so a stale dist/
 * cannot make this pass.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};

let work: string;
let tarball: string;
let files: string[];
let app: string;

function run(command: string, args: readonly string[], cwd: string): string {
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false', CDK_DISABLE_VERSION_CHECK: '1' },
  });
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'package-test-'));
  // What prepack runs, first, so that its output stays out of npm pack's JSON.
  run(TSX, [path.join(ROOT, 'tools', 'build.ts'), '--no-check'], ROOT);
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
}, 300_000);

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

test('the publisher client loads from the installed package and checks a message with the contract', () => {
  const script = `
const { checkEmail, InvalidMessageError } = require('${manifest.name}');
checkEmail({ to: 'ada@example.com', subject: 'Hi', text: 'Hello' });
try {
  checkEmail({ to: 'nobody', subject: 'Hi', text: 'Hello' });
} catch (error) {
  if (error instanceof InvalidMessageError) process.stdout.write(error.issues[0].field);
}
`;
  expect(execFileSync(process.execPath, ['-e', script], { cwd: app, encoding: 'utf8' })).toBe('to');
});

test('the app imports the construct by name, type-checks against the .d.ts and synthesizes a JavaScript asset', () => {
  const source = `
import { App } from 'aws-cdk-lib';
import { EmailPipelineStack, type EmailPipelineProps } from '${manifest.name}';

const pipeline: EmailPipelineProps = { senderAddress: 'noreply@mail.example.org', sesIdentity: 'mail.example.org' };
// The CDK CLI turns asset metadata on; so does this app, to find the function's asset.
const app = new App({ outdir: 'cdk.out', context: { 'aws:cdk:enable-asset-metadata': true } });
new EmailPipelineStack(app, 'Mail', { pipeline });
app.synth();
`;
  fs.writeFileSync(path.join(app, 'app.ts'), source);
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
  );
  // Run the same program as JavaScript, as `cdk synth` would with a JS app.
  fs.writeFileSync(
    path.join(app, 'app.js'),
    source
      .replace(/^import \{ App \} from 'aws-cdk-lib';$/m, "const { App } = require('aws-cdk-lib');")
      .replace(/^import \{ EmailPipelineStack.*$/m, `const { EmailPipelineStack } = require('${manifest.name}');`)
      .replace('const pipeline: EmailPipelineProps =', 'const pipeline ='),
  );
  run(process.execPath, ['app.js'], app);

  const outdir = path.join(app, 'cdk.out');
  const template = JSON.parse(fs.readFileSync(path.join(outdir, 'Mail.template.json'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, string> }>;
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
    const assetPath = fn.Metadata?.['aws:asset:path'];
    expect(assetPath).toMatch(/^asset\./);
    const code = fs.readFileSync(path.join(outdir, assetPath ?? '', 'index.js'), 'utf8');
    // CommonJS with its SDK clients and Powertools inside (nothing left to resolve), not TypeScript;
    // without the SDK's default credential chain (its SSO step logs this line) and without the
    // schemas of SES operations no handler calls (README, "As a construct in your own app").
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
  const help = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8' });
  expect({ status: help.status, stderr: help.stderr }).toEqual({ status: 0, stderr: '' });
  expect(help.stdout).toContain('dlq');
  const none = spawnSync(bin, ['dlq', 'list'], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, LOCAL_STATE_DIR: '' },
  });
  expect(none.status).toBe(1);
  expect(none.stderr).toContain('No local pipeline found');
});
