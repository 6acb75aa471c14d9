/**
 * `email-pipeline --version`: the version of the package the CLI came with, found by walking up
 * to this package's package.json (from dist/lib/cli/ when compiled, from lib/cli/ under tsx), past
 * any other package.json on the way.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { run } from '../../../../lib/cli/main';
import { packageVersion } from '../../../../lib/cli/version';
import { capture, tempDir } from '../../helpers';

const { version } = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

test.each([['--version'], ['-V']])('%s prints the version alone on stdout and exits 0', async (flag) => {
  const { io, out, err } = capture();
  expect(await run([flag], io)).toBe(0);
  expect(out).toEqual([version]);
  expect(err).toEqual([]);
});

test('the top-level help names --version', async () => {
  const { io, out } = capture();
  expect(await run(['--help'], io)).toBe(0);
  expect(out.join('\n')).toContain('email-pipeline --version');
});

describe('found from where the CLI runs', () => {
  const dir = tempDir('cli-version-');

  test('installed in an app: its own package.json, not the app one nor another package', () => {
    const app = path.join(dir(), 'app');
    const installed = path.join(app, 'node_modules', 'exactly-once-email');
    mkdirSync(path.join(installed, 'dist', 'lib', 'cli'), { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0' }));
    writeFileSync(
      path.join(installed, 'package.json'),
      JSON.stringify({ name: 'exactly-once-email', version: '9.8.7' }),
    );
    // A package.json of another name on the way (a folder with its own) is passed over.
    writeFileSync(path.join(installed, 'dist', 'package.json'), JSON.stringify({ type: 'commonjs' }));
    expect(packageVersion(path.join(installed, 'dist', 'lib', 'cli'))).toBe('9.8.7');
    expect(packageVersion(path.join(app, 'src'))).toBeUndefined();
  });

  test('from source in this repository', () => {
    expect(packageVersion(path.join(__dirname, '..', '..', '..', '..', 'lib', 'cli'))).toBe(version);
  });
});
