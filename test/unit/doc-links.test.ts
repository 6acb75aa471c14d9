/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an anchor
 * (`#section`, `file.md#section`) is one GitHub makes of a heading in that file. The docs link each
 * other by section, and the alarm descriptions link docs/operators.md by anchor, so a heading renamed
 * in one place must not leave a dead link in another.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The text without fenced code blocks and inline code spans (their brackets are not links). */
function prose(markdown: string): string {
  return markdown
    .replace(/^ *```[\s\S]*?^ *```[^\n]*$/gm, '')
    .replace(/``[^`]*``/g, '')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: its text lower-cased, punctuation dropped, spaces as hyphens. */
export function githubAnchor(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/`/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings, repeated headings numbered as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutCode = markdown.replace(/^ *```[\s\S]*?^ *```[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = githubAnchor(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

interface Link {
  readonly file: string;
  readonly target: string;
}

/** The relative links (`[text](target)`, `![alt](target)`) of a markdown file. */
export function relativeLinks(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  for (const match of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
    links.push({ file, target });
  }
  return links;
}

/** What is wrong with a link, or undefined when it leads somewhere. */
function problem(link: Link): string | undefined {
  const [filePart = '', anchor] = link.target.split('#', 2);
  const resolved = filePart === '' ? path.join(ROOT, link.file) : path.join(ROOT, path.dirname(link.file), filePart);
  if (!fs.existsSync(resolved)) return `${link.file}: ${link.target}: no such file`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `${link.file}: ${link.target}: an anchor into a file that is not markdown`;
  if (!anchors(fs.readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
    return `${link.file}: ${link.target}: no heading makes the anchor #${anchor}`;
  }
  return undefined;
}

const LINKS = DOCS.flatMap((file) => relativeLinks(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));

test('the README and the docs link each other', () => {
  expect(LINKS.filter((l) => l.file === 'README.md' && l.target.startsWith('docs/')).length).toBeGreaterThan(5);
  expect(LINKS.filter((l) => l.file.startsWith('docs/')).length).toBeGreaterThan(5);
});

test('every relative link of README.md and docs/*.md leads to a file and, with an anchor, to its heading', () => {
  expect(LINKS.map(problem).filter((p) => p !== undefined)).toEqual([]);
});

test("a heading's anchor is GitHub's: lower case, punctuation dropped, spaces as hyphens, repeats numbered", () => {
  expect(githubAnchor('Brown-outs: the retry budget, pacing and the circuit breaker')).toBe(
    'brown-outs-the-retry-budget-pacing-and-the-circuit-breaker',
  );
  expect(githubAnchor('Alarm: sesComplaintRateWarning')).toBe('alarm-sescomplaintratewarning');
  expect(githubAnchor("Deploying this repository's app")).toBe('deploying-this-repositorys-app');
  expect(githubAnchor('Prove it on your account: `email-pipeline verify`')).toBe(
    'prove-it-on-your-account-email-pipeline-verify',
  );
  expect([...anchors('# A\n\n## A\n\n```sh\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
});

test('a dead link is found: a missing file, and a missing heading', () => {
  const links = relativeLinks('docs/x.md', 'See [a](nowhere.md), [b](operators.md#no-such-section), `[c](code.md)`.');
  expect(links.map((l) => l.target)).toEqual(['nowhere.md', 'operators.md#no-such-section']);
  expect(links.map(problem)).toEqual([
    'docs/x.md: nowhere.md: no such file',
    'docs/x.md: operators.md#no-such-section: no heading makes the anchor #no-such-section',
  ]);
});
