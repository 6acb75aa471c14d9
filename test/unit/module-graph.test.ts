/**
 * What the operator tools load: the DLQ tools and the CLI read the handler's
 * attribute names, and must not pull in the handler's runtime (Powertools) to
 * do so. Read from esbuild's metafile, which lists each module's run-time
 * imports (type-only imports are erased).
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';

const ROOT = path.join(__dirname, '..', '..');

/** Every module reachable from `entryPoints`, with its run-time imports; packages are not followed. */
async function moduleGraph(entryPoints: string[]): Promise<Metafile['inputs']> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints,
    bundle: true,
    write: false,
    platform: 'node',
    packages: 'external',
    metafile: true,
    outdir: 'out',
    logLevel: 'silent',
  });
  return result.metafile.inputs;
}

function importedPaths(inputs: Metafile['inputs']): string[] {
  return Object.values(inputs).flatMap((input) => input.imports.map((imported) => imported.path));
}

/** The package a bare import names (`@scope/name` or `name`), or undefined for a file or a Node built-in. */
function packageOf(imported: string): string | undefined {
  if (imported.startsWith('.') || imported.startsWith('/') || imported.startsWith('node:')) return undefined;
  if (/^[a-z]+\//.test(imported) && !imported.includes('@') && existsSyncIn(imported)) return undefined;
  const parts = imported.split('/');
  const name = imported.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

/** A path of this repository's own (esbuild names them relative to the root: `lib/...`, `lambdas/...`). */
function existsSyncIn(relative: string): boolean {
  return existsSync(path.join(ROOT, relative));
}

describe('module graph', () => {
  test("what a user's app loads (the construct, ./publisher, the CLI) needs only the packages the manifest depends on", async () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    const installed = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]);
    const inputs = await moduleGraph(['lib/index.ts', 'lib/publisher.ts', 'bin/email-pipeline.ts']);
    const packages = new Set(importedPaths(inputs).flatMap((imported) => packageOf(imported) ?? []));
    expect([...packages].filter((name) => !installed.has(name)).sort()).toEqual([]);
    // It can fail: the send function's SES client is no dependency of the package.
    expect(installed.has('@aws-sdk/client-sesv2')).toBe(false);
  });

  test('the DLQ tools and the operator CLI load no Powertools module', async () => {
    const inputs = await moduleGraph(['lib/dlq/dead-letters.ts', 'bin/email-pipeline.ts']);

    expect(importedPaths(inputs).filter((imported) => imported.startsWith('@aws-lambda-powertools/'))).toEqual([]);
  });

  test('the DLQ tools read the DLQ attribute names from the kernel', async () => {
    const inputs = await moduleGraph(['lib/dlq/dead-letters.ts']);

    expect(inputs['lib/dlq/dead-letters.ts']?.imports.map((imported) => imported.path)).toContain(
      'lambdas/kernel/names.ts',
    );
  });

  test.each(['lambdas/kernel/names.ts'])('%s has no run-time imports', async (file) => {
    const inputs = await moduleGraph([file]);

    expect(inputs[file]?.imports).toEqual([]);
  });
});
