/**
 * What `npm run <script>` runs, as [command, ...args] for spawn, read from package.json so a test
 * runs the very command the docs give (and fails if a script stops being a plain
 * `node ...` line it can reproduce).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../tools/dev/local/paths';

export interface ScriptCommand {
  readonly command: string;
  readonly args: readonly string[];
}

export function npmScript(name: string, ...extra: readonly string[]): ScriptCommand {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string | undefined>;
  };
  const line = pkg.scripts[name];
  if (line === undefined) throw new Error(`package.json has no "${name}" script`);
  const [program, ...args] = line.trim().split(/\s+/);
  if (program !== 'node') throw new Error(`npm run ${name} runs "${line}": the tests expect a plain node command`);
  return {
    command: process.execPath,
    args: [...args.map((a) => (a.endsWith('.ts') ? path.join(REPO_ROOT, a) : a)), ...extra],
  };
}
