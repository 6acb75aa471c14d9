/**
 * Builds what the local pipeline runs: every function's bundle, with the same
 * esbuild options `npm run build` bundles the deployed handlers with, and the
 * consumer process that hosts one.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_ENTRIES, type LambdaName } from '../../../lib/construct/bundling';
import { lambdaBuildOptions } from '../../build/lambda-bundle';
import { LOCAL_DIR } from './paths';

export interface Bundles {
  /** The send-email handler, as `cdk deploy` ships it. */
  readonly handler: string;
  /** The ledger function. */
  readonly ledger: string;
  /** Every function built, by name (a function whose entry is not in this checkout is left out). */
  readonly functions: Readonly<Partial<Record<LambdaName, string>>>;
  /** The consumer process entry. */
  readonly consumer: string;
}

export async function buildBundles(outDir = path.join(LOCAL_DIR, 'build')): Promise<Bundles> {
  const consumer = path.join(outDir, 'consumer', 'index.js');
  const entries = Object.entries(LAMBDA_ENTRIES).filter(([, entry]) => existsSync(entry));
  const functions = Object.fromEntries(entries.map(([name]) => [name, path.join(outDir, name, 'index.js')]));
  await Promise.all([
    ...entries.map(([name, entry]) => build(lambdaBuildOptions(entry, functions[name] as string))),
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
  const need = (name: LambdaName): string => {
    const bundle = functions[name];
    if (!bundle) throw new Error(`no entry for the ${name} function at ${LAMBDA_ENTRIES[name]}`);
    return bundle;
  };
  return { handler: need('send-email'), ledger: need('ledger'), functions, consumer };
}
