/**
 * What the Lambda bundles leave out (tools/build/lambda-bundle.ts): the SDK's default credential
 * chain, replaced by lambdas/runtime/lambda-credentials.ts, the SDK's event-stream code, replaced
 * by lambdas/runtime/no-event-streams.ts, Powertools' JMESPath, replaced by
 * lambdas/runtime/bare-field-jmespath.ts, and the schemas of SDK operations no handler calls
 * (tools/build/sdk-schema-keys.ts). Read from esbuild's metafile and output.
 */
import * as path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { HANDLER_ENTRY } from '../../../../lib/construct/bundling';
import { lambdaBuildOptions } from '../../../../tools/build/lambda-bundle';
import { literalSchemaKeys } from '../../../../tools/build/sdk-schema-keys';

interface Bundle {
  readonly code: string;
  readonly inputs: Metafile['inputs'];
}

let bundle: Bundle;

beforeAll(async () => {
  const result = await build({
    ...lambdaBuildOptions(HANDLER_ENTRY, path.join(__dirname, 'out', 'index.js')),
    write: false,
    metafile: true,
    sourcemap: false,
  });
  bundle = { code: result.outputFiles[0]?.text ?? '', inputs: result.metafile.inputs };
}, 60_000);

const packagesOf = (inputs: Metafile['inputs']) =>
  new Set(Object.keys(inputs).flatMap((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? []));

describe('literalSchemaKeys', () => {
  const source = [
    'const _h = "http";',
    'const _e = "error";',
    'export var Op$ = [9, n0, { [_h]: ["POST", "/", 200] }];',
  ];

  test('writes a computed key naming a string constant of the file as that string', () => {
    expect(literalSchemaKeys(source.join('\n'))).toContain('export var Op$ = [9, n0, { "http": ["POST", "/", 200] }];');
  });

  test('leaves a computed key alone when its name is not a string constant of the file', () => {
    const other = 'export var Op$ = [9, n0, { [_x]: 1, [_e]: 2 }];';

    expect(literalSchemaKeys([...source, other].join('\n'))).toContain('{ [_x]: 1, "error": 2 }');
  });
});

describe('the send-email bundle', () => {
  test('carries no code of the SDK default credential chain (shared files, SSO, STS, IMDS)', () => {
    const packages = packagesOf(bundle.inputs);

    for (const left of [
      '@aws-sdk/credential-provider-node',
      '@aws-sdk/credential-provider-ini',
      '@aws-sdk/credential-provider-sso',
      '@aws-sdk/nested-clients',
      '@smithy/credential-provider-imds',
    ]) {
      expect(packages).not.toContain(left);
    }
    expect(Object.keys(bundle.inputs)).toContain('lambdas/runtime/lambda-credentials.ts');
  });

  test('carries the schema of SES SendEmail but not of SES operations no handler calls', () => {
    expect(bundle.code).toContain('/v2/email/outbound-emails');
    expect(bundle.code).not.toContain('/v2/email/contact-lists');
    expect(bundle.code).not.toContain('CreateContactList');
  });

  test('carries no event-stream code of the SDK, only the stub that refuses it', () => {
    const eventStreamFiles = Object.keys(bundle.inputs).filter((file) => file.includes('submodules/event-streams/'));

    expect(eventStreamFiles).toEqual([]);
    expect(Object.keys(bundle.inputs)).toContain('lambdas/runtime/no-event-streams.ts');
  });

  test("carries Powertools' idempotency but not its JMESPath library, only the bare-field subset", () => {
    const jmespathFiles = Object.keys(bundle.inputs).filter((file) =>
      file.includes('@aws-lambda-powertools/jmespath/'),
    );

    expect(jmespathFiles).toEqual([]);
    expect(Object.keys(bundle.inputs)).toContain('lambdas/runtime/bare-field-jmespath.ts');
    expect(Object.keys(bundle.inputs).some((file) => file.includes('@aws-lambda-powertools/idempotency/'))).toBe(true);
  });
});
