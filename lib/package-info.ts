/**
 * The package's own name, version and home, read from its package.json (found by walking up from
 * this file, so it works from the sources and from the compiled dist/ alike).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const PACKAGE_NAME = 'exactly-once-email';

/** Where the sources and the docs live (package.json's `repository`). */
export const REPOSITORY_URL = 'https://github.com/exactly-once-email/exactly-once-email';

let version: string | undefined;

/** The installed package's version (package.json's `version`). */
export function packageVersion(): string {
  if (version !== undefined) return version;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') {
        version = manifest.version;
        return version;
      }
    }
    if (path.dirname(dir) === dir)
      throw new Error(`${PACKAGE_NAME}: its package.json was not found above ${__dirname}`);
  }
}

/** A file of the docs at this version's tag (`docs/operators.md` -> its page on the repository's host). */
export function docsUrl(file: string): string {
  return `${REPOSITORY_URL}/blob/v${packageVersion()}/${file}`;
}
