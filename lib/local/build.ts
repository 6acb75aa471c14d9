/**
 * Builds what the local pipeline runs: the handler bundle, with the same
 * esbuild options `npm run build` bundles the deployed handlers with, and the consumer
 * process that hosts it.
 */
import * as path from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { BUNDLING, HANDLER_ENTRY } from '../bundling';
import { LOCAL_DIR } from './paths';

export interface Bundles {
  /** The handler, as `cdk deploy` ships it. */
  readonly handler: string;
  /** The consumer process entry. */
  readonly consumer: string;
}

/** esbuild options for a Lambda entry point, as `npm run build` bundles it for `cdk deploy`. */
export function lambdaBuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    mainFields: [...BUNDLING.mainFields],
    external: [...BUNDLING.externalModules],
    logLevel: 'error',
  };
}

export async function buildBundles(outDir = path.join(LOCAL_DIR, 'build')): Promise<Bundles> {
  const handler = path.join(outDir, 'send-email', 'index.js');
  const consumer = path.join(outDir, 'consumer', 'index.js');
  await Promise.all([
    build(lambdaBuildOptions(HANDLER_ENTRY, handler)),
    build({
      entryPoints: [path.join(__dirname, 'consumer-main.ts')],
      outfile: consumer,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    }),
  ]);
  return { handler, consumer };
}
