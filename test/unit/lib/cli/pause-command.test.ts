/** pause / resume: the command's arguments, refused with exit 2 and never half applied. */
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../../../lib/cli/main';
import { capture } from '../../helpers';

describe('arguments', () => {
  test('--help prints the usage and exits 0; stray arguments and resume --show are usage errors', async () => {
    const help = capture();
    expect(await run(['pause', '--help'], help.io)).toBe(0);
    expect(help.out.join('\n')).toContain('email-pipeline pause --show');
    expect(help.out.join('\n')).toContain('the high-priority queue');
    const stray = capture();
    expect(await run(['pause', 'now'], stray.io)).toBe(2);
    expect(stray.err.join('\n')).toContain('unexpected argument "now"');
    const show = capture();
    expect(await run(['resume', '--show'], show.io)).toBe(2);
    expect(show.err.join('\n')).toContain('--show goes with pause');
    const status = capture();
    expect(await run(['resume', '--status'], status.io)).toBe(2);
    expect(status.err.join('\n')).toContain('--status goes with pause');
    const typo = capture();
    expect(await run(['pause', '--shwo'], typo.io)).toBe(2);
    expect(typo.err.join('\n')).toContain('did you mean --show?');
    const timeout = capture();
    expect(await run(['pause', '--show', '--timeout', '5'], timeout.io)).toBe(2);
    expect(timeout.err.join('\n')).toContain('--timeout goes with pause, not --show');
    const zero = capture();
    expect(await run(['pause', '--timeout', '0'], zero.io)).toBe(2);
    expect(zero.err.join('\n')).toContain('--timeout must be a whole number of at least 1');
  });

  test('pause --status is the old spelling of --show: it still reads, with a warning', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pause-status-'));
    const saved = process.env.LOCAL_STATE_DIR;
    process.env.LOCAL_STATE_DIR = dir;
    try {
      // No local pipeline: the command gets as far as looking for it, after the warning.
      const old = capture();
      expect(await run(['pause', '--status'], old.io)).toBe(1);
      expect(old.err[0]).toBe(
        'email-pipeline: pause --status is deprecated: use pause --show (the old spelling goes in a future major version)',
      );
      expect(old.err.join('\n')).toContain('No local pipeline found');
    } finally {
      if (saved === undefined) delete process.env.LOCAL_STATE_DIR;
      else process.env.LOCAL_STATE_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
