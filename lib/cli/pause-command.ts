/**
 * `email-pipeline pause [--status] [--json]` and `email-pipeline resume`: stop and restart sending
 * without failing or dead-lettering anything (pause.ts: the send function's event source mappings
 * disabled; locally a flag file its event sources honour). On AWS they need
 * lambda:ListEventSourceMappings and lambda:UpdateEventSourceMapping (README: "What an operator
 * needs on AWS").
 */
import * as path from 'node:path';
import { parseCommand } from './args';
import type { Command, Io } from './command';
import { awsFailure, UsageError } from './errors';
import { readPause, switchSending, type PauseState, type PauseSwitch } from './pause';
import { printable } from './printable';
import { output, resolveTarget, type Target } from './target';

const OPTIONS = {
  status: { type: 'boolean' },
  json: { type: 'boolean' },
  stack: { type: 'string' },
  region: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const PAUSE_USAGE = `Usage: email-pipeline pause [--stack NAME] [--region R]
       email-pipeline pause --status [--json] [--stack NAME] [--region R]

Stops sending: the send function stops receiving from its queue(s), every message waits there with
its receive count untouched, nothing fails and nothing is dead-lettered. A batch already received
finishes. email-pipeline resume starts again. The queue's retention bounds how long a pause may
last, and a message already retrying keeps its retry budget's clock running (README: Pausing).
--status only says whether sending is paused. Without --stack it works on the local pipeline.`;

const RESUME_USAGE = `Usage: email-pipeline resume [--json] [--stack NAME] [--region R]

Starts sending again after email-pipeline pause: the waiting messages are sent, each once.
Without --stack it works on the local pipeline (npm start).`;

/** The switch of the target: its send function's mappings, or the local flag file. */
function pauseSwitch(target: Target): PauseSwitch {
  if (target.local) {
    return {
      kind: 'local',
      flagFile: output(target, 'PauseFile'),
      queueUrl: output(target, 'QueueUrl'),
    };
  }
  return { kind: 'aws', settings: target.clients.sqs, functionName: output(target, 'FunctionName') };
}

/** Lines for a person: the summary, then one line per event source. */
export function formatPauseState(state: PauseState, description: string): string[] {
  const lines = [
    state.paused
      ? `Sending is paused on ${description}: messages wait in the queue (email-pipeline resume starts again).`
      : `Sending is on for ${description}.`,
  ];
  for (const source of state.sources) {
    lines.push(`  ${printable(source.state).padEnd(9)}  ${printable(source.queue)}  ${printable(source.id)}`);
  }
  return lines;
}

function pausing(name: 'pause' | 'resume', usage: string, summary: string): Command {
  return {
    name,
    summary,
    usage,
    async run(argv: readonly string[], io: Io): Promise<void> {
      const parsed = parseCommand(argv, OPTIONS, usage, io);
      if (!parsed) return;
      const { values, positionals } = parsed;
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`, usage);
      if (name === 'resume' && values.status) {
        throw new UsageError('--status goes with pause: email-pipeline pause --status', usage);
      }
      const target = await resolveTarget({ stack: values.stack, region: values.region });
      const at = pauseSwitch(target);
      const verb = values.status ? 'read whether sending is paused on' : `${name} sending on`;
      const state = await (values.status ? readPause(at) : switchSending(at, name === 'resume')).catch(
        (error: unknown) => {
          throw awsFailure(`Could not ${verb} ${target.description}`, error, !target.local);
        },
      );
      if (values.json) {
        io.out(JSON.stringify(state));
        return;
      }
      for (const line of formatPauseState(state, target.description)) io.out(line);
      if (!values.status && name === 'pause') {
        io.err(
          `Paused ${state.sources.length} event source(s) of the send function. They stop receiving within seconds ` +
            '(a batch in hand finishes); email-pipeline pause --status shows Disabled once they have.',
        );
      }
    },
  };
}

export const pauseCommand = pausing(
  'pause',
  PAUSE_USAGE,
  'stop sending; messages wait in the queue (--status: is it?)',
);
export const resumeCommand = pausing('resume', RESUME_USAGE, 'start sending again after pause');

/** The local flag file of a state folder (tools/dev/local writes it to outputs.json as PauseFile). */
export function localPauseFile(stateDir: string): string {
  return path.join(stateDir, 'send-paused');
}
