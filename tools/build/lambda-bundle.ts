/**
 * esbuild options for one Lambda entry point. `npm run build` (tools/build/build.ts: the assets the
 * package ships), the local pipeline (tools/dev/local/build.ts) and the benchmark all bundle with
 * these, from the values of lib/construct/bundling.ts, so the code run locally is the code `cdk deploy`
 * uploads. Its own module, light to load: the local tools do not load aws-cdk-lib.
 */
import type { BuildOptions } from 'esbuild';
import { BUNDLING } from '../../lib/construct/bundling';
import { sdkSchemaKeysPlugin } from './sdk-schema-keys';

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
    sourcesContent: BUNDLING.sourcesContent,
    mainFields: [...BUNDLING.mainFields],
    external: [...BUNDLING.externalModules],
    alias: { ...BUNDLING.alias },
    plugins: BUNDLING.dropUnusedSdkSchemas ? [sdkSchemaKeysPlugin()] : [],
    logLevel: 'error',
  };
}
