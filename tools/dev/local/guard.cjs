'use strict';
/**
 * Process guard: `node guard.cjs <command> [args...]`.
 *
 * Starts <command> and makes sure it never outlives whoever started the guard.
 * The parent keeps the write end of our stdin open; when that pipe closes (the
 * parent exited, crashed or was killed with SIGKILL), the guard stops the
 * command: SIGTERM, then SIGKILL after a grace period. SIGTERM, SIGINT and
 * SIGHUP sent to the guard are handled the same way. The guard exits with the
 * command's exit status once the command is gone.
 *
 * The command's stdout and stderr are the guard's own (inherited), so the
 * parent reads them directly. Plain CommonJS so that it runs on bare `node`.
 */
const { spawn } = require('node:child_process');
const { constants } = require('node:os');

const GRACE_MS = 5000;
const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('guard: usage: node guard.cjs <command> [args...]\n');
  process.exit(2);
}

const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;

function stopChild() {
  if (stopping) return;
  stopping = true;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), GRACE_MS);
  }
}

child.on('error', (error) => {
  process.stderr.write(`guard: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
});

// The parent holds the other end of this pipe: end-of-file means it is gone.
process.stdin.on('end', stopChild);
process.stdin.on('close', stopChild);
process.stdin.on('error', stopChild);
process.stdin.resume();
// Nobody may be reading our output any more once the parent is gone.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, stopChild);
}
