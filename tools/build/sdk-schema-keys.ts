/**
 * Lets esbuild drop the SDK schemas a handler never uses.
 *
 * Each AWS SDK v3 client declares the schema of every operation of its service in
 * `dist-es/schemas/schemas_0.js` (SES v2: 107 KB), as top-level arrays that name their traits
 * with computed keys: `{ [_h]: ["POST", "/v2/email/outbound-emails", 200] }`, where `_h` is a
 * `const _h = "http"` of the same file. esbuild cannot prove that a computed key has no side
 * effect, so it keeps every schema of the service, used or not. This plugin writes such a key
 * as the string literal its constant holds (`{ "http": [...] }`): the same object, and esbuild
 * then keeps only the schemas a handler's commands reach (for the send-email handler, SES's 49 KB
 * of schemas become 9 KB). A key whose name is not a plain string constant of the file is left
 * as it is, so a change in the SDK's generated code can only leave a schema in, never change one.
 */
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/** The generated schema files of the SDK's clients. */
export const SDK_SCHEMA_FILE = /[/\\]@aws-sdk[/\\]client-[^/\\]+[/\\]dist-es[/\\]schemas[/\\]schemas_\d+\.js$/;

/** `const _x = "text";` at the top level: the constants the schema keys name. */
const STRING_CONSTANT = /^const (_\w+) = ("[^"\\\n]*");$/gm;

/** A computed object key naming one identifier: `[_x]:`. */
const COMPUTED_KEY = /\[(_\w+)\]:/g;

/** The source with every computed key that names a string constant of the same source written as that string. */
export function literalSchemaKeys(source: string): string {
  const constants = new Map<string, string>();
  for (const match of source.matchAll(STRING_CONSTANT)) constants.set(match[1] as string, match[2] as string);
  return source.replace(COMPUTED_KEY, (key: string, name: string) => {
    const literal = constants.get(name);
    return literal === undefined ? key : `${literal}:`;
  });
}

/** The esbuild plugin: {@link literalSchemaKeys} on every SDK schema file a bundle loads. */
export function sdkSchemaKeysPlugin(): Plugin {
  return {
    name: 'sdk-schema-keys',
    setup(build) {
      build.onLoad({ filter: SDK_SCHEMA_FILE }, async (args) => ({
        contents: literalSchemaKeys(await readFile(args.path, 'utf8')),
        loader: 'js',
      }));
    },
  };
}
