/**
 * What the operator tools load: the DLQ tools and the CLI read the handler's
 * attribute names, and must not pull in the handler's runtime (Powertools) to
 * do so. Read from esbuild's metafile, which lists each module's run-time
 * imports (type-only imports are erased).
 */
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

describe('module graph', () => {
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
