/**
 * `email-pipeline --version`: the version of the package the CLI came with. The CLI runs compiled
 * (dist/bin/email-pipeline.js, dist/lib/cli/...) and from source (bin/email-pipeline.ts through
 * tsx), so its package.json is found by walking up from this file to the one of this package.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_NAME } from './target';

/** The version in the nearest package.json of this package above `from`, or undefined when there is none. */
export function packageVersion(from: string = __dirname): string | undefined {
  for (let at = path.resolve(from); ; at = path.dirname(at)) {
    const file = path.join(at, 'package.json');
    if (existsSync(file)) {
      try {
        const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (json.name === PACKAGE_NAME && typeof json.version === 'string') return json.version;
      } catch {
        // Not this package's: look further up.
      }
    }
    if (path.dirname(at) === at) return undefined;
  }
}
