import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** `cdk synth` itself (the CLI, cdk.json, context from -c), not the construct alone. */
function synth(...context: string[]): { status: number | null; output: string } {
  const out = mkdtempSync(path.join(tmpdir(), 'cdk-retry-path-'));
  try {
    const result = spawnSync(
      path.join('node_modules', '.bin', 'cdk'),
      ['synth', '--quiet', '-o', out, ...context.flatMap((c) => ['-c', c])],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      },
    );
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

test('cdk synth refuses a retention period that cannot hold the retry path, naming the rule and both values', () => {
  const result = synth('emailPipeline:retentionPeriodSeconds=60');

  expect(result.status).not.toBe(0);
  expect(result.output).toContain('Invalid setting retentionPeriodSeconds=60');
  expect(result.output).toContain('retention must hold the whole retry path');
  expect(result.output).toContain('maxReceiveCount=5');
  expect(result.output).toContain('visibilityTimeoutSeconds=180');
}, 60_000);

test('cdk synth refuses a team whose sender is not of the SES identity, naming the team field', () => {
  const result = synth('emailPipeline:teams={"billing":{"senders":["billing@other.example"]}}');

  expect(result.status).not.toBe(0);
  expect(result.output).toContain('Invalid setting teams.billing.senders[0]="billing@other.example"');
  expect(result.output).toContain('must belong to the SES identity example.com');
  expect(result.output).toContain('-c emailPipeline:teams=VALUE');
}, 60_000);
