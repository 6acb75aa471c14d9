/**
 * Pausing sending: the send function's SQS event source mappings disabled (every one of them: the
 * work queue's, and any other queue's feeding the same function), so Lambda stops receiving and
 * messages wait in their queues with their receive counts untouched; enabling them resumes.
 * Locally the same switch is a flag file in the state folder that the local event sources check
 * before each receive (tools/dev/local/event-source.ts).
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { call, resolveAws, type Credentials } from './aws-rest';
import type { ClientSettings } from './target';

/** One event source of the send function, as `pause --status` shows it. */
export interface SendSource {
  /** The mapping's UUID on AWS; `local` locally. */
  readonly id: string;
  /** The queue it reads: its ARN on AWS, its URL locally. */
  readonly queue: string;
  /** Lambda's state (Enabled, Disabling, Disabled, Enabling, Updating, ...); locally Enabled or Disabled. */
  readonly state: string;
}

/** What the event sources say about sending. */
export interface PauseState {
  /** True when no source is Enabled or Enabling. */
  readonly paused: boolean;
  readonly sources: readonly SendSource[];
}

/** Paused when every source is off or on its way off. */
export function pauseState(sources: readonly SendSource[]): PauseState {
  return { paused: sources.every((s) => !['Enabled', 'Enabling'].includes(s.state)), sources };
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
  | { readonly kind: 'local'; readonly flagFile: string; readonly queueUrl: string };

function localSources(flagFile: string, queue: string): SendSource[] {
  return [{ id: 'local', queue, state: existsSync(flagFile) ? 'Disabled' : 'Enabled' }];
}

/** The sources' state now. */
export async function readPause(target: PauseSwitch): Promise<PauseState> {
  if (target.kind === 'local') return pauseState(localSources(target.flagFile, target.queueUrl));
  const aws = await resolveAws(target.settings);
  return pauseState(await listSendSources(aws, target.functionName));
}

/**
 * Pauses (`enabled` false) or resumes every source; resolves to the state after. A source already
 * as asked is left alone. Throws when the function has no SQS source at all (a wrong stack).
 */
export async function switchSending(target: PauseSwitch, enabled: boolean): Promise<PauseState> {
  if (target.kind === 'local') {
    if (enabled) rmSync(target.flagFile, { force: true });
    else writeFileSync(target.flagFile, `paused at ${new Date().toISOString()}\n`);
    return pauseState(localSources(target.flagFile, target.queueUrl));
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
