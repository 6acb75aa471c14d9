/**
 * `email-pipeline pause [--show] [--json]` and `email-pipeline resume`: stop and restart sending
 * without failing or dead-lettering anything (pause.ts: the send function's event source mappings
 * disabled, every lane's; locally a flag file every send consumer honours and acknowledges).
 * `pause` returns once sending has stopped: every mapping Disabled, or locally every consumer's
 * acknowledgement, so nothing published after it returns is sent before `resume`. On AWS they need
 * lambda:ListEventSourceMappings and lambda:UpdateEventSourceMapping (README: "What an operator
 * needs on AWS").
 *
 * `--show` only reads the state; `--status` is its old spelling ("status" is a key's delivery
 * status): it still works, with a warning.
 */
import * as path from 'node:path';
import { deprecated, parseCommand, wholeNumber } from './args';
import type { Command, Io } from './command';
import { awsFailure, OperationError, UsageError } from './errors';
import { NotStopped, readPause, switchSending, waitUntilStopped, type PauseState, type PauseSwitch } from './pause';
import { printable } from './printable';
import {
  output,
  resolveTarget,
  TARGET_HELP,
  TARGET_OPTIONS,
  TARGET_SYNOPSIS,
  targetOptions,
  type Target,
} from './target';

/** How long pause waits for sending to stop, by default. */
export const DEFAULT_STOP_TIMEOUT_SECONDS = 300;

const OPTIONS = {
  show: { type: 'boolean' },
  /** The old spelling of --show (warns). */
  status: { type: 'boolean' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  ...TARGET_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

const PAUSE_USAGE = `Usage: email-pipeline pause [--timeout SECONDS] [--json] ${TARGET_SYNOPSIS}
       email-pipeline pause --show [--json] ${TARGET_SYNOPSIS}

Stops sending on every lane: the send function stops receiving from its queues (the work queue
and the high-priority queue), every message waits there with its receive count untouched,
nothing fails and nothing is dead-lettered. A batch already received finishes first: pause
returns once sending has stopped (every event source mapping Disabled; locally every consumer
has acknowledged), so nothing published after it returns is sent before email-pipeline resume.
--timeout bounds that wait (default ${DEFAULT_STOP_TIMEOUT_SECONDS} s; when sending has not stopped by then, exit 1,
the pause still asked for). The queue's retention bounds how long a pause may last, and a message
already retrying keeps its retry budget's clock running (README: Pausing).
--show only says whether sending is paused, and each event source's state.

${TARGET_HELP}`;

const RESUME_USAGE = `Usage: email-pipeline resume [--json] ${TARGET_SYNOPSIS}

Starts sending again after email-pipeline pause: the waiting messages are sent, each once.

${TARGET_HELP}`;

/** The switch of the target: its send function's mappings, or the local flag file. */
export function pauseSwitch(target: Target): PauseSwitch {
  if (target.local) return { kind: 'local', flagFile: output(target, 'PauseFile') };
  return { kind: 'aws', settings: target.clients.sqs, functionName: output(target, 'FunctionName') };
}

/** Lines for a person: the summary, then one line per event source. */
export function formatPauseState(state: PauseState, description: string): string[] {
  const lines = [
    state.stopped
      ? `Sending is paused on ${description}: messages wait in the queue (email-pipeline resume starts again).`
      : state.paused
        ? `Sending is pausing on ${description}: some event sources still finish a batch or have not stopped yet.`
        : `Sending is on for ${description}.`,
  ];
  for (const source of state.sources) {
    lines.push(`  ${printable(source.state).padEnd(9)}  ${printable(source.queue)}  ${printable(source.id)}`);
  }
  return lines;
}

/** The sources not stopped yet, for a message. */
function stillGoing(state: PauseState): string {
  return state.sources
    .filter((s) => s.state !== 'Disabled')
    .map((s) => `${s.id} (${s.queue}) ${s.state}`)
    .join(', ');
}

async function pause(
  at: PauseSwitch,
  target: Target,
  timeoutSeconds: number,
  json: boolean,
  io: Io,
): Promise<PauseState> {
  const asked = await switchSending(at, false);
  if (!json && !asked.stopped) {
    io.err(
      `Pausing ${asked.sources.length} event source(s) of ${target.description}: waiting until each has finished ` +
        `its batch in hand and stopped (up to ${timeoutSeconds} s)...`,
    );
  }
  try {
    return await waitUntilStopped(at, { timeoutMs: timeoutSeconds * 1000 });
  } catch (error) {
    if (!(error instanceof NotStopped)) throw error;
    const { state } = error;
    if (!state.paused) {
      throw new OperationError(
        `Sending was resumed on ${target.description} while pause waited (${stillGoing(state)}): it is not paused.`,
      );
    }
    throw new OperationError(
      `Sending has not stopped yet on ${target.description} after ${timeoutSeconds} s: ${stillGoing(state)}. ` +
        'The pause stays asked for; email-pipeline pause --show follows it, and pause again waits again.',
    );
  }
}

function pausing(name: 'pause' | 'resume', usage: string, summary: string): Command {
  return {
    name,
    summary,
    usage,
    async run(argv: readonly string[], io: Io): Promise<void> {
      const parsed = parseCommand(argv, OPTIONS, usage, io, ['status']);
      if (!parsed) return;
      const { values, positionals } = parsed;
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, usage);
      if (name === 'resume' && (values.show || values.status || values.timeout !== undefined)) {
        const flag = values.show ? '--show' : values.status ? '--status' : '--timeout';
        throw new UsageError(
          `${flag} goes with pause: email-pipeline pause ${flag === '--timeout' ? '--timeout SECONDS' : '--show'}`,
          usage,
        );
      }
      if (values.status) deprecated(io, 'pause --status', 'pause --show');
      const show = values.show === true || values.status === true;
      if (show && values.timeout !== undefined) throw new UsageError('--timeout goes with pause, not --show', usage);
      const timeout = wholeNumber('timeout', values.timeout, 1, usage) ?? DEFAULT_STOP_TIMEOUT_SECONDS;
      const named = targetOptions(values, usage);

      const target = await resolveTarget(named);
      const at = pauseSwitch(target);
      const verb = show ? 'read whether sending is paused on' : `${name} sending on`;
      const state = await (
        show
          ? readPause(at)
          : name === 'pause'
            ? pause(at, target, timeout, values.json === true, io)
            : switchSending(at, true)
      ).catch((error: unknown) => {
        throw awsFailure(`Could not ${verb} ${target.description}`, error, !target.local);
      });
      if (values.json) {
        io.out(JSON.stringify(state));
        return;
      }
      for (const line of formatPauseState(state, target.description)) io.out(line);
      if (!show && name === 'pause') {
        io.err(
          state.sources.length === 0 && target.local
            ? 'No send consumer of the local pipeline runs (or its consumers predate this version: restart npm start ' +
                'so that pause can wait for them). Nothing is sent until email-pipeline resume.'
            : `Sending has stopped: ${state.sources.length} event source(s) of the send function are Disabled. ` +
                'Nothing is sent until email-pipeline resume.',
        );
      }
      if (name === 'resume') {
        io.err(
          target.local
            ? 'The consumers receive again at their next look (within a second).'
            : 'Lambda enables the mappings (Enabling, then Enabled): email-pipeline pause --show follows them.',
        );
      }
    },
  };
}

export const pauseCommand = pausing(
  'pause',
  PAUSE_USAGE,
  'stop sending on every lane; returns once stopped (--show: is it paused?)',
);
export const resumeCommand = pausing('resume', RESUME_USAGE, 'start sending again after pause');

/** The local flag file of a state folder (tools/dev/local writes it to outputs.json as PauseFile). */
export function localPauseFile(stateDir: string): string {
  return path.join(stateDir, 'send-paused');
}
