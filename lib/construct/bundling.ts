/**
 * How the Lambda handlers are bundled. `npm run build` (the pre-built assets the
 * construct ships, tools/build/build.ts) and the local pipeline (tools/dev/local/build.ts)
 * both read these values, so the code a developer runs locally is the code
 * `cdk deploy` uploads.
 */
import * as path from 'node:path';

export const HANDLER_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'send-email', 'main.ts');
export const LEDGER_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'ledger', 'handler.ts');
export const STATUS_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'status', 'handler.ts');
export const CANCEL_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'status', 'cancel-handler.ts');
/** The reputation pause (monitoring/reputation-pause.ts): created only with `pauseSendingOnReputation`. */
export const REPUTATION_PAUSE_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'reputation-pause', 'handler.ts');
export const SCHEDULE_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'schedule', 'handler.ts');
/** The callback function (lib/construct/callbacks/): created only when a callback is configured. */
export const CALLBACKS_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'callbacks', 'handler.ts');
/** The functions' credential chain: environment, then a container endpoint (see the module). */
export const LAMBDA_CREDENTIALS_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'runtime', 'lambda-credentials.ts');
/** In place of the SDK's event-stream code, which no function calls (see the module). */
export const NO_EVENT_STREAMS_ENTRY = path.join(__dirname, '..', '..', 'lambdas', 'runtime', 'no-event-streams.ts');
/** In place of Powertools' JMESPath: the claim's two expressions are bare field names (see the module). */
export const BARE_FIELD_JMESPATH_ENTRY = path.join(
  __dirname,
  '..',
  '..',
  'lambdas',
  'runtime',
  'bare-field-jmespath.ts',
);

/** Every function of the pipeline by name (its asset folder), each bundled with the same options below. */
export const LAMBDA_ENTRIES = {
  'send-email': HANDLER_ENTRY,
  ledger: LEDGER_ENTRY,
  status: STATUS_ENTRY,
  cancel: CANCEL_ENTRY,
  'reputation-pause': REPUTATION_PAUSE_ENTRY,
  schedule: SCHEDULE_ENTRY,
  callbacks: CALLBACKS_ENTRY,
} as const;
export type LambdaName = keyof typeof LAMBDA_ENTRIES;

export const BUNDLING = {
  /** esbuild target; matches the Lambda runtime (nodejs24.x, RUNTIME in lib/construct/common/runtime.ts). */
  target: 'node24',
  minify: true,
  sourceMap: true,
  /**
   * Source maps carry mappings only, not the sources: stack traces need file, line and column,
   * and Node reads (and parses) the whole map at require() under --enable-source-maps.
   */
  sourcesContent: false,
  /** Nothing is left to the runtime's SDK copy: the bundle carries the SDK versions we tested. */
  externalModules: [] as string[],
  /** Prefer ES module builds of dependencies so esbuild can drop unused code. */
  mainFields: ['module', 'main'],
  /**
   * Modules put in place of others in every bundle: the SDK's default credential chain (shared
   * files, SSO, STS, IMDS: code a function never runs) by the one Lambda needs, the SDK's
   * event-stream code, which no function calls, by a stub that says so, and Powertools' JMESPath
   * by the bare-field subset the idempotency claim uses.
   */
  alias: {
    '@aws-sdk/credential-provider-node': LAMBDA_CREDENTIALS_ENTRY,
    '@smithy/core/event-streams': NO_EVENT_STREAMS_ENTRY,
    '@aws-lambda-powertools/jmespath': BARE_FIELD_JMESPATH_ENTRY,
    '@aws-lambda-powertools/jmespath/functions': BARE_FIELD_JMESPATH_ENTRY,
  } as Readonly<Record<string, string>>,
  /** Unused SDK operation schemas are dropped (tools/build/sdk-schema-keys.ts). */
  dropUnusedSdkSchemas: true,
} as const;
