/**
 * The tests (and the local pipeline and the handler bundles they start, all spawned with
 * process.execPath) run on the Node the functions deploy to: npm puts node_modules/.bin first
 * in PATH, and the `node` devDependency installs the official binary there. Jest started
 * outside npm on the machine's own Node, or an install that skipped the `node` package's
 * install script (its binary comes from that script; without it `node` falls through to the
 * machine's), fails here instead of testing the bundles on another major.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { BUNDLING } from '../../../../lib/construct/bundling';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};
const pinned = manifest.devDependencies.node ?? '';

test('the node devDependency is pinned to the major the handler bundles are built for', () => {
  expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  expect(`node${pinned.split('.')[0]}`).toBe(BUNDLING.target);
});

test('the tests run on the node devDependency, not on the machine’s Node', () => {
  expect(process.versions.node).toBe(pinned);
});
