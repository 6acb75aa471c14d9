/**
 * What ships is what tsconfig.build.json compiles from lib/index.ts and bin/email-pipeline.ts,
 * with everything they import. None of it may come from the development tools (tools/: the
 * local pipeline, the benchmark, the build) or the tests: those stay in the repository, and
 * an import of one would leave the package without the file it needs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const BUILD = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { files: string[] };

/** The repository's own files the entry points import, directly or not (packages left out). */
function importedFiles(entries: readonly string[]): string[] {
  const options: ts.CompilerOptions = { moduleResolution: ts.ModuleResolutionKind.Node10, resolveJsonModule: true };
  const seen = new Set<string>();
  const queue = entries.map((entry) => path.join(ROOT, entry));
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles: specifiers } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of specifiers) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
      if (resolved && !resolved.isExternalLibraryImport) queue.push(resolved.resolvedFileName);
    }
  }
  return [...seen].map((file) => path.relative(ROOT, file).split(path.sep).join('/')).sort();
}

test('the package is built only from lib/, lambdas/ and bin/email-pipeline.ts', () => {
  expect(BUILD.files).toEqual(['lib/index.ts', 'bin/email-pipeline.ts']);
  const files = importedFiles(BUILD.files);
  expect(files).toEqual(
    expect.arrayContaining(['lib/index.ts', 'lib/construct/monitoring/monitoring.ts', 'bin/email-pipeline.ts']),
  );
  expect(files.filter((file) => !/^(lib|lambdas)\//.test(file) && file !== 'bin/email-pipeline.ts')).toEqual([]);
});
