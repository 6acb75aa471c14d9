import * as path from 'node:path';

/** The repository root (this file is tools/dev/local/paths.ts). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
/** Everything the local tools download, build or write (git-ignored). */
export const LOCAL_DIR = path.join(REPO_ROOT, '.local');
