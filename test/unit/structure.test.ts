/**
 * The layout holds (docs/contributing.md, Layout): no import cycles; no product file (lib/, lambdas/) over 400
 * lines, and each opens with a comment saying what it is for; the kernel (lambdas/kernel/)
 * imports nothing but itself and Node, no SDK; and the send function's folder is its own: product
 * code elsewhere never imports it, the development tools only through its composition root. The
 * files a module comment names exist.
 * Tests sit at the path of what they test: a test file in a suite's subfolder names a source file
 * at that path, and most substantial product files have one (`STRUCTURE_REPORT=1 npx jest
 * test/unit/structure.test.ts` prints the share and the files without one).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const SOURCE_DIRS = ['bin', 'lib', 'lambdas', 'tools'];
const MAX_PRODUCT_LINES = 400;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(relative));
    else if (/\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative);
  }
  return out;
}

const FILES = SOURCE_DIRS.flatMap(filesUnder).sort();
const PRODUCT = FILES.filter((file) => /^(lib|lambdas)\//.test(file));
const OPTIONS: ts.CompilerOptions = { moduleResolution: ts.ModuleResolutionKind.Node10, resolveJsonModule: true };

interface Imports {
  /** The repository's own files it imports (repo-relative). */
  readonly local: string[];
  /** The packages it imports (names as written). */
  readonly packages: string[];
}

function importsOf(file: string): Imports {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const local: string[] = [];
  const packages: string[] = [];
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith('.')) {
      packages.push(fileName);
      continue;
    }
    const resolved = ts.resolveModuleName(fileName, path.join(ROOT, file), OPTIONS, ts.sys).resolvedModule;
    if (resolved) local.push(path.relative(ROOT, resolved.resolvedFileName).split(path.sep).join('/'));
  }
  return { local, packages };
}

const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]));

/** Every cycle's files, found by a depth-first walk (each cycle once, from its first file met). */
function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of GRAPH.get(file)?.local ?? []) {
      if (!GRAPH.has(next)) continue;
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of FILES) if (state.get(file) === undefined) visit(file);
  return found;
}

test('no import cycles in bin/, lib/, lambdas/ and tools/', () => {
  expect(cycles()).toEqual([]);
});

test(`no product file is over ${MAX_PRODUCT_LINES} lines`, () => {
  const long = PRODUCT.map((file) => ({
    file,
    lines: fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length,
  })).filter(({ lines }) => lines > MAX_PRODUCT_LINES);
  expect(long).toEqual([]);
});

test('every product file opens with a comment saying what it is for', () => {
  const bare = PRODUCT.filter((file) => !/^\s*(\/\*\*|\/\/)/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
  expect(bare).toEqual([]);
});

/** The `.ts` paths a file's opening comment names (`send/sender.ts`, `lib/construct/bundling.ts`). */
function pathsNamedInOpeningComment(file: string): string[] {
  const opening = /^\s*(\/\*\*[\s\S]*?\*\/|(?:\/\/.*\n)+)/.exec(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  return [...(opening?.[1] ?? '').matchAll(/(?<![\w./-])[\w-][\w./-]*\.ts\b/g)].map(([named]) => named);
}

test('the files a module comment names exist (the path as written ends a file path of the repository)', () => {
  const known = [...FILES, ...filesUnder('test')];
  const stale = FILES.flatMap((file) =>
    pathsNamedInOpeningComment(file)
      .filter((named) => !known.some((existing) => existing === named || existing.endsWith(`/${named}`)))
      .map((named) => `${file} names ${named}`),
  );
  expect(stale).toEqual([]);
});

test('the kernel imports only itself and Node: no SDK, no other folder', () => {
  const kernel = FILES.filter((file) => file.startsWith('lambdas/kernel/'));
  expect(kernel.length).toBeGreaterThan(5);
  const outside = kernel.flatMap((file) => {
    const { local, packages } = GRAPH.get(file)!;
    return [
      ...local.filter((imported) => !imported.startsWith('lambdas/kernel/')),
      ...packages.filter((name) => !name.startsWith('node:')),
    ].map((imported) => `${file} -> ${imported}`);
  });
  expect(outside).toEqual([]);
});

/**
 * Who may import the send function's folder from outside it. The dev tools build a handler through
 * its composition root; the benchmarks also wire parts of it by hand, as the in-process tests do,
 * from its test-support entry (testing.ts), which keeps those parts out of the composition root.
 * (Tests are not in this graph: a unit test imports the stage it tests.)
 */
const SEND_EMAIL_ENTRIES: readonly { readonly from: string; readonly entry: string }[] = [
  { from: 'tools/', entry: 'lambdas/send-email/handler.ts' },
  { from: 'tools/dev/bench/', entry: 'lambdas/send-email/testing.ts' },
];

test('nothing outside lambdas/send-email/ imports it; the dev tools only through its composition root', () => {
  const crossings = FILES.filter((file) => !file.startsWith('lambdas/send-email/')).flatMap((file) =>
    GRAPH.get(file)!
      .local.filter((imported) => imported.startsWith('lambdas/send-email/'))
      .filter((imported) => !SEND_EMAIL_ENTRIES.some(({ from, entry }) => file.startsWith(from) && imported === entry))
      .map((imported) => `${file} -> ${imported}`),
  );
  expect(crossings).toEqual([]);
});

test("the send function's test-support entry is never part of it: nothing in its folder imports testing.ts", () => {
  const inside = FILES.filter((file) => file.startsWith('lambdas/send-email/')).filter((file) =>
    GRAPH.get(file)!.local.includes('lambdas/send-email/testing.ts'),
  );
  expect(inside).toEqual([]);
});

/** Product files over this many lines are expected to have a test at their own path. */
const SUBSTANTIAL_LINES = 50;
/** The share of them that must have one. */
const MIN_TESTED_SHARE = 0.7;
/** Tests that are about the repository as a whole, not one file: they stay at the suite's root. */
const SUITE_ROOT = /^test\/(unit|infra)\/[^/]+\.test\.ts$/;

/**
 * Where a file's tests may sit: its path under test/unit (`lib/cli/args.ts` ->
 * `test/unit/lib/cli/args.test.ts`, or `args.<aspect>.test.ts` beside it), under test/infra for
 * the construct and the CDK app (they need a synth), and under test/integration for what only an
 * emulator can exercise.
 */
function suitesFor(file: string): string[] {
  if (/^(lib\/construct|bin)\//.test(file)) return ['test/unit', 'test/infra', 'test/integration'];
  return ['test/unit', 'test/integration'];
}

function testsAt(file: string): string[] {
  const stem = file.replace(/\.(ts|mts|cts)$/, '');
  return suitesFor(file).flatMap((suite) => {
    const dir = path.join(ROOT, suite, path.dirname(stem));
    if (!fs.existsSync(dir)) return [];
    const base = path.basename(stem);
    return fs
      .readdirSync(dir)
      .filter((name) => name === `${base}.test.ts` || (name.startsWith(`${base}.`) && name.endsWith('.test.ts')))
      .map((name) => `${suite}/${path.dirname(stem)}/${name}`);
  });
}

const lineCount = (file: string): number =>
  fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\n$/, '').split('\n').length;

test('a test file below a suite root sits at the path of a source file it tests', () => {
  const tests = ['test/unit', 'test/infra'].flatMap((suite) =>
    filesUnder(suite).filter((file) => file.endsWith('.test.ts') && !SUITE_ROOT.test(file)),
  );
  expect(tests.length).toBeGreaterThan(50);
  const astray = tests.filter((test) => {
    const source = test.replace(/^test\/(unit|infra)\//, '').replace(/(\.[\w-]+)?\.test\.ts$/, '.ts');
    return !FILES.includes(source);
  });
  expect(astray).toEqual([]);
});

test(`at least ${MIN_TESTED_SHARE * 100} % of the product files over ${SUBSTANTIAL_LINES} lines have a test at their own path`, () => {
  const substantial = ['bin', 'lib', 'lambdas']
    .flatMap(filesUnder)
    .filter((file) => lineCount(file) > SUBSTANTIAL_LINES)
    .sort();
  const untested = substantial.filter((file) => testsAt(file).length === 0);
  const share = (substantial.length - untested.length) / substantial.length;
  const report =
    `${substantial.length - untested.length} of ${substantial.length} product files over ${SUBSTANTIAL_LINES} lines ` +
    `(${(share * 100).toFixed(1)} %) have a test at their own path; without one:\n  ${untested.join('\n  ')}`;
  if (process.env.STRUCTURE_REPORT) process.stdout.write(`${report}\n`);
  expect({ share: share >= MIN_TESTED_SHARE ? 'enough' : report }).toEqual({ share: 'enough' });
});
