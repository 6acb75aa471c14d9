/**
 * The settings' types document each default for the construct's users (their IDE shows the
 * `@default` tag); the declaration is where the defaults live. This keeps the two from drifting:
 * every setting's `@default` starts with what the declaration says.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { SETTINGS, type SettingDeclaration } from '../../../../lib/settings';

const TYPES = path.join(__dirname, '..', '..', '..', '..', 'lib', 'settings', 'types.ts');

/** Each property of the settings interfaces, with its `@default` tag's text (undefined when it has none). */
function documentedDefaults(): Map<string, string | undefined> {
  const source = ts.createSourceFile(TYPES, fs.readFileSync(TYPES, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = new Map<string, string | undefined>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    if (!['PipelineSettings', 'AppContextSettings'].includes(node.name.text)) return;
    for (const member of node.members) {
      if (!ts.isPropertySignature(member)) continue;
      const tag = ts.getJSDocTags(member).find((t) => t.tagName.text === 'default');
      const text = tag === undefined ? undefined : ts.getTextOfJSDocComment(tag.comment)?.replace(/\s+/g, ' ').trim();
      out.set((member.name as ts.Identifier).text, text);
    }
  });
  return out;
}

/** How a declared default starts its `@default` tag. */
function expectedStart(declaration: SettingDeclaration): string | undefined {
  const value = declaration.default;
  if (typeof value === 'object') return value.described === '— (required)' ? undefined : value.described;
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

const documented = documentedDefaults();

test('the types declare exactly the declared settings', () => {
  expect([...documented.keys()].sort()).toEqual(Object.keys(SETTINGS).sort());
});

test.each(Object.entries(SETTINGS) as [string, SettingDeclaration][])(
  "%s: the type's @default starts with the declared default",
  (name, declaration) => {
    const expected = expectedStart(declaration);
    if (expected === undefined) expect(documented.get(name)).toBeUndefined();
    else expect(documented.get(name)?.startsWith(expected)).toBe(true);
  },
);
