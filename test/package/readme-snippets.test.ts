/**
 * Every TypeScript snippet of the README compiles against the package's own declarations, as a
 * reader would paste it into an app that installed the package: `exactly-once-email` resolves to
 * lib/index.d.ts as tsconfig.build.json (what `npm run build` compiles into dist/) declares it,
 * emitted fresh into a temporary folder, so neither a fresh clone without dist/ nor a stale dist/
 * decides the outcome. A snippet that stops compiling, because the API changed or the snippet was
 * wrong to begin with, fails the test with its README line.
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
};
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The package's declarations as `npm run build` writes them, into `dir`; returns its `types` file there. */
function declarations(dir: string): string {
  execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', dir], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  // package.json's types is dist/lib/index.d.ts: the same path below the build's outDir.
  return path.join(dir, path.relative('dist', MANIFEST.types));
}

interface Snippet {
  /** The README line of the opening fence. */
  readonly line: number;
  readonly code: string;
}

/** The ```ts / ```typescript blocks of a markdown text. */
export function typescriptSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? '')) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i += 1) body.push(lines[i] ?? '');
    snippets.push({ line: start + 1, code: body.join('\n') });
  }
  return snippets;
}

/**
 * Type-checks each snippet as its own module, all in one program (the package's declarations are
 * read once); returns the problems of each snippet, each with its README line.
 */
function compile(snippets: readonly Snippet[]): string[][] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-snippets-'));
  const types = declarations(path.join(dir, 'package'));
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
    paths: { [MANIFEST.name]: [types], '*': ['node_modules/*', 'node_modules/@types/*'] },
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
        return `README.md:${snippet.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
  );
}

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

test('the README has TypeScript snippets to check', () => {
  expect(typescriptSnippets(readme).length).toBeGreaterThanOrEqual(2);
});

test('every TypeScript snippet of the README compiles against the package', () => {
  const snippets = typescriptSnippets(readme);
  // A snippet that uses the API wrongly, checked in the same program: the check can fail, and says where.
  const wrong = typescriptSnippets(
    "a\nb\n```ts\nimport { EmailPublisher } from 'exactly-once-email';\nnew EmailPublisher({ topic: 1 });\n```\n",
  );
  const problems = compile([...snippets, ...wrong]);
  expect(problems.slice(0, snippets.length).flat()).toEqual([]);
  expect(problems[snippets.length]?.[0]).toMatch(/^README\.md:5: .*topic/);
}, 120_000);
