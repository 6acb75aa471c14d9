/**
 * Every TypeScript snippet of the README and of docs/*.md compiles against the package's own
 * declarations, as a reader would paste it into an app that installed the package:
 * `exactly-once-email` resolves to lib/index.d.ts as tsconfig.build.json (what `npm run build`
 * compiles into dist/) declares it, and `exactly-once-email/<entry>` to the declarations of that
 * entry of package.json's `exports` (lib/<entry>.d.ts while there is no such map), emitted fresh
 * into a temporary folder, so neither a fresh clone without dist/ nor a stale dist/ decides the
 * outcome. A snippet that stops compiling, because the API changed or the snippet was wrong to begin
 * with, fails the test with its file and line. Snippets inside list items (indented fences) count.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const MANIFEST = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  types: string;
  exports?: Record<string, unknown>;
};
/** The markdown files whose snippets are checked, relative to the repository. */
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The `types` file of an `exports` entry (a string, or the `types` of a conditions object, nested or not). */
function typesOf(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry.endsWith('.d.ts') ? entry : undefined;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const conditions = entry as Record<string, unknown>;
  if (typeof conditions.types === 'string') return conditions.types;
  for (const value of Object.values(conditions)) {
    const types = typesOf(value);
    if (types !== undefined) return types;
  }
  return undefined;
}

/**
 * The package's declarations as `npm run build` writes them, into `dir`; returns the module paths a
 * snippet may import (`exactly-once-email`, `exactly-once-email/<entry>`) mapped to their files there.
 */
function declarations(dir: string): Record<string, string[]> {
  execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', dir], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  // package.json's types is dist/lib/index.d.ts: the same path below the build's outDir.
  const below = (file: string): string => path.join(dir, path.relative('dist', file));
  const paths: Record<string, string[]> = { [MANIFEST.name]: [below(MANIFEST.types)] };
  for (const [entry, target] of Object.entries(MANIFEST.exports ?? {})) {
    const types = typesOf(target);
    if (entry === '.' || types === undefined) continue;
    paths[`${MANIFEST.name}/${entry.replace(/^\.\//, '')}`] = [below(types)];
  }
  // Until package.json has an exports map, `<name>/<entry>` stands for lib/<entry>.d.ts.
  if (MANIFEST.exports === undefined) paths[`${MANIFEST.name}/*`] = [path.join(dir, 'lib', '*')];
  return paths;
}

interface Snippet {
  /** The markdown file, relative to the repository. */
  readonly file: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  readonly code: string;
}

/** The ```ts / ```typescript blocks of a markdown text, indented ones (in list items) included. */
export function typescriptSnippets(markdown: string, file = 'README.md'): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^( *)```(ts|typescript)\s*$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const indent = fence[1] ?? '';
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^ *```\s*$/.test(lines[i] ?? ''); i += 1) {
      const line = lines[i] ?? '';
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line);
    }
    snippets.push({ file, line: start + 1, code: body.join('\n') });
  }
  return snippets;
}

/**
 * Type-checks each snippet as its own module, all in one program (the package's declarations are
 * read once); returns the problems of each snippet, each with its file and line.
 */
function compile(snippets: readonly Snippet[]): string[][] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-snippets-'));
  const packagePaths = declarations(path.join(dir, 'package'));
  const files = snippets.map((snippet, n) => {
    const file = path.join(dir, `snippet-${n}.ts`);
    // `export {}` keeps a snippet without imports a module of its own (no clashes between snippets).
    fs.writeFileSync(file, `${snippet.code}\nexport {};\n`);
    return file;
  });
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2024.d.ts'],
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    baseUrl: ROOT,
    paths: { ...packagePaths, '*': ['node_modules/*', 'node_modules/@types/*'] },
  };
  let diagnostics: readonly ts.Diagnostic[];
  try {
    diagnostics = ts.getPreEmitDiagnostics(ts.createProgram(files, options));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return snippets.map((snippet, n) =>
    diagnostics
      .filter((d) => d.file !== undefined && path.normalize(d.file.fileName) === files[n])
      .map((d) => {
        const { line } = (d.file as ts.SourceFile).getLineAndCharacterOfPosition(d.start ?? 0);
        return `${snippet.file}:${snippet.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
  );
}

const SNIPPETS = DOCS.flatMap((file) => typescriptSnippets(fs.readFileSync(path.join(ROOT, file), 'utf8'), file));

test('the README and the docs have TypeScript snippets to check', () => {
  expect(SNIPPETS.filter((s) => s.file === 'README.md').length).toBeGreaterThanOrEqual(2);
  expect(SNIPPETS.filter((s) => s.file.startsWith('docs/')).length).toBeGreaterThanOrEqual(2);
});

test('a snippet inside a list item is found, without its indentation', () => {
  const [snippet] = typescriptSnippets('- a file:\n\n  ```ts\n  const a = 1;\n  ```\n', 'docs/x.md');
  expect(snippet).toEqual({ file: 'docs/x.md', line: 3, code: 'const a = 1;' });
});

test('every TypeScript snippet of the README and the docs compiles against the package', () => {
  const snippets = SNIPPETS;
  // A snippet that uses the API wrongly, checked in the same program: the check can fail, and says where.
  const wrong = typescriptSnippets(
    "a\nb\n```ts\nimport { EmailPublisher } from 'exactly-once-email';\nnew EmailPublisher({ topic: 1 });\n```\n",
  );
  const problems = compile([...snippets, ...wrong]);
  expect(problems.slice(0, snippets.length).flat()).toEqual([]);
  expect(problems[snippets.length]?.[0]).toMatch(/^README\.md:5: .*topic/);
}, 120_000);
