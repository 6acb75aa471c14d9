/**
 * The Lambda handlers ship pre-bundled: `npm run build` bundles each entry with esbuild
 * (the options of lib/construct/bundling.ts) into `dist/assets/<name>/index.js`, and the construct
 * loads that folder as an asset. An app that installs the package needs neither esbuild nor
 * Docker, and the asset hash depends only on the bundle, not on the machine that synthesizes.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LAMBDA_ENTRIES, type LambdaName } from './bundling';

export { LAMBDA_ENTRIES, type LambdaName };

/** The file each asset folder holds; the function's handler is `index.handler`. */
export const ASSET_FILE = 'index.js';

/**
 * Where the bundles are: beside the compiled library in the package (`dist/lib/construct` ->
 * `dist/assets`), or under `dist/` when the library runs from its TypeScript sources in
 * this repository.
 */
const ASSET_ROOTS = [path.join(__dirname, '..', '..', 'assets'), path.join(__dirname, '..', '..', 'dist', 'assets')];

/** The folder of one pre-built handler. Throws, saying how to build it, when it is missing. */
export function assetDir(name: LambdaName): string {
  for (const root of ASSET_ROOTS) {
    const dir = path.join(root, name);
    if (existsSync(path.join(dir, ASSET_FILE))) return dir;
  }
  throw new Error(
    `The pre-built ${name} handler is missing (looked in ${ASSET_ROOTS.map((r) => path.join(r, name)).join(', ')}). ` +
      'Run `npm run build` in the repository (a published package ships it).',
  );
}

/** The function code of one handler, as a CDK asset. */
export function handlerCode(name: LambdaName): lambda.Code {
  return lambda.Code.fromAsset(assetDir(name));
}
