/**
 * `npm run build`: the type check, then what the package ships.
 *
 *   dist/assets/<name>/index.js   every Lambda handler, bundled as `cdk deploy` needs it
 *   dist/lib, dist/lambdas, ...   the library compiled to JavaScript with .d.ts (tsconfig.build.json)
 *   schema/email-message.schema.json   the message contract for publishers (tools/build/schema.ts)
 *   docs/settings.md's settings table   from the settings declaration (tools/build/settings-docs.ts)
 *   docs/operators.md's alarm table, runbook headings   from the alarm catalog (tools/build/alarm-docs.ts)
 *
 * `--assets` builds the handler bundles only (the infra tests and `cdk synth` need them);
 * `--no-check` skips the type check of the whole repository (prepack: the emit checks what ships).
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { ASSET_FILE, LAMBDA_ENTRIES } from '../../lib/construct/assets';
import { writeAlarmDocs } from './alarm-docs';
import { lambdaBuildOptions } from './lambda-bundle';
import { writeSchema } from './schema';
import { writeSettingsTable } from './settings-docs';

const ROOT = path.join(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Bundles every handler into dist/assets/<name>/ (the folder is emptied first: it is hashed whole). */
export async function buildAssets(outRoot = path.join(DIST, 'assets')): Promise<string[]> {
  return Promise.all(
    Object.entries(LAMBDA_ENTRIES).map(async ([name, entry]) => {
      const dir = path.join(outRoot, name);
      rmSync(dir, { recursive: true, force: true });
      await build(lambdaBuildOptions(entry, path.join(dir, ASSET_FILE)));
      return dir;
    }),
  );
}

async function main(): Promise<void> {
  const assetsOnly = process.argv.includes('--assets');
  const check = !process.argv.includes('--no-check');
  const started = Date.now();
  const dirs = await buildAssets();
  // Quiet with --assets: `cdk synth --quiet` runs it before every synth.
  if (assetsOnly) return;
  console.log(`bundled ${dirs.map((d) => path.relative(ROOT, d)).join(', ')} (${Date.now() - started} ms)`);
  console.log(`wrote ${path.relative(ROOT, writeSchema())}`);
  console.log(`wrote the settings table in ${path.relative(ROOT, writeSettingsTable())}`);
  console.log(`wrote the alarm table and runbook headings in ${path.relative(ROOT, writeAlarmDocs())}`);
  if (check) execFileSync(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  for (const dir of ['lib', 'lambdas', 'bin']) rmSync(path.join(DIST, dir), { recursive: true, force: true });
  execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  console.log(`compiled the library into ${path.relative(ROOT, DIST)}/ (${Date.now() - started} ms in all)`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
