import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { CALLBACK_PROPS, build, resource } from './helpers';

/** The slow end-to-end checks: the pre-built handler as the assembly holds it, and the built-in CloudFormation validation. */

describe('the send-email asset (pre-built by npm run build, no esbuild or Docker at synth)', () => {
  let bundleDir: string;
  /** Bundle folder and environment of each function, by construct id. */
  const functions: Record<string, { dir: string; environment: Record<string, unknown> }> = {};

  beforeAll(() => {
    const { app, stack } = build();
    const template = Template.fromStack(stack);
    const assembly = app.synth();
    const { sendFunction, ledger } = stack.pipeline;
    for (const fn of [sendFunction, ledger.ledgerFunction, ledger.statusFunction]) {
      const found = resource(template, stack.getLogicalId(fn.node.defaultChild as CfnResource));
      functions[fn.node.id] = {
        // The asset's S3 key is `<hash>.zip`; its staged folder is `asset.<hash>`.
        dir: path.join(assembly.directory, `asset.${String(found.Properties.Code.S3Key).replace(/\.zip$/, '')}`),
        environment: found.Properties.Environment.Variables,
      };
    }
    bundleDir = functions[sendFunction.node.id].dir;
    expect(fs.existsSync(path.join(bundleDir, 'index.js'))).toBe(true);
  });

  test('builds a minified bundle with a source map and the AWS SDK inside', () => {
    const code = fs.readFileSync(path.join(bundleDir, 'index.js'), 'utf8');
    expect(fs.existsSync(path.join(bundleDir, 'index.js.map'))).toBe(true);
    // externalModules: [] -> the SDK clients and Powertools are inside, not left to the runtime.
    expect(code).not.toMatch(/require\(["'](@aws-sdk\/(client-|lib-)|@smithy\/|@aws-lambda-powertools\/)/);
    expect(code).toContain('"SendEmail"');
    expect(code).toContain('sourceMappingURL=index.js.map');
  });

  test.each(['SendFunction', 'LedgerFunction', 'StatusFunction'])(
    '%s loads with the environment the construct sets and exports the handler',
    (id) => {
      const { dir, environment } = functions[id];
      // Tokens (Refs) become plausible literals; the module reads its settings at load time.
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(environment)) {
        env[name] = typeof value === 'string' ? value : name.endsWith('_URL') ? 'https://sqs.local/123/q' : 'token';
      }
      const result = spawnSync(
        process.execPath,
        [
          '-e',
          `const m = require(${JSON.stringify(path.join(dir, 'index.js'))}); process.exit(typeof m.handler === 'function' ? 0 : 3);`,
        ],
        {
          env: { ...env, PATH: process.env.PATH, AWS_REGION: 'eu-west-1' },
          encoding: 'utf8',
          timeout: 20_000,
        },
      );
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    },
  );
});

describe('built-in CloudFormation validation', () => {
  // With operators listed: without them the construct warns, on purpose, that nobody may redrive (grants.test.ts).
  test('the stack passes with no findings', () => {
    const operators = [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/oncall')];
    const { app } = build({ redrivePrincipals: operators }, undefined, { cfnValidation: true });
    expect(() => app.synth()).not.toThrow();
    const report = JSON.parse(fs.readFileSync(path.join(app.outdir, 'validation-report.json'), 'utf8'));
    const violations = report.pluginReports.flatMap((r: { violations?: unknown[] }) => r.violations ?? []);
    expect(violations).toEqual([]);
  });

  test('with callbacks (the pipeline’s and a team’s) too', () => {
    const operators = [new iam.ArnPrincipal('arn:aws:iam::123456789012:role/oncall')];
    const { app } = build({ ...CALLBACK_PROPS, redrivePrincipals: operators }, undefined, { cfnValidation: true });
    expect(() => app.synth()).not.toThrow();
    const report = JSON.parse(fs.readFileSync(path.join(app.outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports.flatMap((r: { violations?: unknown[] }) => r.violations ?? [])).toEqual([]);
  });
});

describe('the CDK app (bin/app.ts) with a bad setting', () => {
  const repo = path.join(__dirname, '..', '..');
  const cdkJson = JSON.parse(fs.readFileSync(path.join(repo, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };

  function synthWith(extra: Record<string, unknown>): { status: number | null; stderr: string } {
    const result = spawnSync(process.execPath, [require.resolve('tsx/cli'), path.join(repo, 'bin', 'app.ts')], {
      cwd: repo,
      encoding: 'utf8',
      // How the CDK CLI hands cdk.json's context and `-c` values to the app.
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, ...extra }) },
    });
    return { status: result.status, stderr: result.stderr };
  }

  test('names the setting and its rule, exits 1, and prints no stack trace', () => {
    const { status, stderr } = synthWith({ 'emailPipeline:retentionPeriodSeconds': 60 });
    expect(status).toBe(1);
    expect(stderr).toContain('Invalid setting retentionPeriodSeconds=60: retention must hold the whole retry path');
    expect(stderr).toContain('-c emailPipeline:retentionPeriodSeconds=VALUE');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  test('a misspelled key is named with the closest known one', () => {
    const { status, stderr } = synthWith({ 'emailPipeline:senderAdress': 'noreply@example.com' });
    expect(status).toBe(1);
    expect(stderr).toContain('did you mean emailPipeline:senderAddress?');
    expect(stderr).toContain('-c emailPipeline:senderAdress=VALUE');
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});
