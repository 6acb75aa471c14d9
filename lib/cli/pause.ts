/**
 * Pausing sending: the send function's SQS event source mappings disabled (every one of them: the
 * work queue's, the high-priority queue's, any other queue's feeding the same function), so Lambda
 * stops receiving and messages wait in their queues with their receive counts untouched; enabling
 * them resumes. A pause has taken hold once every mapping is Disabled (Disabling still receives).
 * Locally the same switch is a flag file in the state folder that every send consumer, of every
 * lane, checks between batches and acknowledges (local-pause.ts).
 */
import { call, resolveAws, type Credentials } from './aws-rest';
import { consumerState, pauseToken, removePause, runningConsumers, writePause } from './local-pause';
import type { ClientSettings } from './target';

/** One event source of the send function, as `pause --show` shows it. */
export interface SendSource {
  /** The mapping's UUID on AWS; the consumer's name locally. */
  readonly id: string;
  /** The queue it reads: its ARN on AWS, its URL locally. */
  readonly queue: string;
  /** Lambda's state (Enabled, Disabling, Disabled, Enabling, Updating, ...); locally the same words. */
  readonly state: string;
}

/** What the event sources say about sending. */
export interface PauseState {
  /** True when a pause is asked for: no source is Enabled or Enabling. */
  readonly paused: boolean;
  /** True when the pause has taken hold: every source is Disabled, none receives. */
  readonly stopped: boolean;
  readonly sources: readonly SendSource[];
}

/** States in which a mapping receives nothing. */
const STOPPED_STATES: readonly string[] = ['Disabled', 'Deleting'];

/** Paused when every source is off or on its way off; stopped once every one is off. */
export function pauseState(sources: readonly SendSource[]): PauseState {
  const paused = sources.every((s) => !['Enabled', 'Enabling'].includes(s.state));
  return { paused, stopped: paused && sources.every((s) => STOPPED_STATES.includes(s.state)), sources };
}

interface Aws {
  readonly region: string;
  readonly credentials: Credentials;
}

interface MappingJson {
  readonly UUID?: string;
  readonly EventSourceArn?: string;
  readonly State?: string;
}

const MAPPINGS_PATH = '/2015-03-31/event-source-mappings/';

/** The send function's SQS event source mappings (ListEventSourceMappings, every page). */
export async function listSendSources(aws: Aws, functionName: string): Promise<SendSource[]> {
  const out: SendSource[] = [];
  let marker: string | undefined;
  do {
    const text = await call(
      {
        method: 'GET',
        host: `lambda.${aws.region}.amazonaws.com`,
        path: MAPPINGS_PATH,
        query: { FunctionName: functionName, ...(marker ? { Marker: marker } : {}) },
      },
      'lambda',
      aws,
    );
    const page = JSON.parse(text) as { EventSourceMappings?: MappingJson[]; NextMarker?: string };
    for (const m of page.EventSourceMappings ?? []) {
      if (m.UUID && m.EventSourceArn?.startsWith('arn:aws') && m.EventSourceArn.includes(':sqs:')) {
        out.push({ id: m.UUID, queue: m.EventSourceArn, state: m.State ?? 'Unknown' });
      }
    }
    marker = page.NextMarker || undefined;
  } while (marker);
  return out;
}

/** Enables or disables one mapping (UpdateEventSourceMapping); resolves to its new state. */
export async function setSourceEnabled(aws: Aws, source: SendSource, enabled: boolean): Promise<SendSource> {
  const text = await call(
    {
      method: 'PUT',
      host: `lambda.${aws.region}.amazonaws.com`,
      path: `${MAPPINGS_PATH}${encodeURIComponent(source.id)}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Enabled: enabled }),
    },
    'lambda',
    aws,
  );
  const m = JSON.parse(text) as MappingJson;
  return { ...source, state: m.State ?? (enabled ? 'Enabling' : 'Disabling') };
}

/** One mapping by UUID (GetEventSourceMapping): its state. */
export async function readSource(aws: Aws, uuid: string): Promise<SendSource> {
  const text = await call(
    { method: 'GET', host: `lambda.${aws.region}.amazonaws.com`, path: `${MAPPINGS_PATH}${encodeURIComponent(uuid)}` },
    'lambda',
    aws,
  );
  const m = JSON.parse(text) as MappingJson;
  return { id: m.UUID ?? uuid, queue: m.EventSourceArn ?? '', state: m.State ?? 'Unknown' };
}

/** Where the switch is: the mappings of a function on AWS, or the local flag file. */
export type PauseSwitch =
  | { readonly kind: 'aws'; readonly settings: ClientSettings; readonly functionName: string }
  | { readonly kind: 'local'; readonly flagFile: string };

/** The local pipeline's state: one source per running send consumer; paused while the flag is there. */
function localPause(flagFile: string): PauseState {
  const token = pauseToken(flagFile);
  const sources = runningConsumers(flagFile).map((c) => ({
    id: c.name,
    queue: c.queue,
    state: consumerState(c, token),
  }));
  const paused = token !== undefined;
  return { paused, stopped: paused && sources.every((s) => s.state === 'Disabled'), sources };
}

/** The sources' state now. */
export async function readPause(target: PauseSwitch): Promise<PauseState> {
  if (target.kind === 'local') return localPause(target.flagFile);
  const aws = await resolveAws(target.settings);
  return pauseState(await listSendSources(aws, target.functionName));
}

/**
 * Pauses (`enabled` false) or resumes every source; resolves to the state after. A source already
 * as asked is left alone. Throws when the function has no SQS source at all (a wrong stack).
 */
export async function switchSending(target: PauseSwitch, enabled: boolean): Promise<PauseState> {
  if (target.kind === 'local') {
    if (enabled) removePause(target.flagFile);
    else writePause(target.flagFile);
    return localPause(target.flagFile);
  }
  const aws = await resolveAws(target.settings);
  const sources = await listSendSources(aws, target.functionName);
  if (sources.length === 0) throw new Error(`the function ${target.functionName} has no SQS event source mapping`);
  const wanted = enabled ? ['Enabled', 'Enabling'] : ['Disabled', 'Disabling'];
  const after: SendSource[] = [];
  for (const source of sources) {
    after.push(wanted.includes(source.state) ? source : await setSourceEnabled(aws, source, enabled));
  }
  return pauseState(after);
}

/** How {@link waitUntilStopped} waits (a clock and a sleep of their own in tests). */
export interface StopWait {
  readonly timeoutMs: number;
  /** Between two looks. @default 2000 on AWS, 100 locally */
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told each state seen that has not stopped yet. */
  readonly progress?: (state: PauseState) => void;
}

/** The pause did not take hold in time; `state` is the last one seen. */
export class NotStopped extends Error {
  override readonly name = 'NotStopped';
  constructor(readonly state: PauseState) {
    super('the event sources did not stop in time');
  }
}

/**
 * Waits until the pause has taken hold: on AWS every mapping of the send function Disabled
 * (GetEventSourceMapping's state, through ListEventSourceMappings), locally every running send
 * consumer's acknowledgement. Resolves to the state then; rejects with {@link NotStopped} after
 * `timeoutMs`, or at once when a source is Enabled again (someone resumed meanwhile).
 */
export async function waitUntilStopped(target: PauseSwitch, wait: StopWait): Promise<PauseState> {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const pollMs = wait.pollMs ?? (target.kind === 'local' ? 100 : 2000);
  const deadline = now() + wait.timeoutMs;
  for (;;) {
    const state = await readPause(target);
    if (state.stopped) return state;
    if (!state.paused || now() >= deadline) throw new NotStopped(state);
    wait.progress?.(state);
    await sleep(pollMs);
  }
}
