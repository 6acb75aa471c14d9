/**
 * `email-pipeline dlq redrive --queue ledger`: the ledger's DLQ is redriven by the ledger function
 * reading it, never by sending to the ledger's buffer (whose policy admits SES's events rule only:
 * what reaches the buffer, the ledger records as SES's word). The function's second event source
 * mapping, on the DLQ, is created disabled; this enables it, follows the DLQ until nothing is
 * visible or in flight (or it stops shrinking: events the function keeps failing on return to the
 * DLQ), then disables it again, also after an error or Ctrl-C. Locally the switch is a flag file
 * the local ledger consumer checks, as `pause` is.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { readSource, setSourceEnabled } from '../cli/pause';
import { resolveAws } from '../cli/aws-rest';
import type { ClientSettings } from '../cli/target';

/** How long a ledger DLQ redrive waits for the DLQ to shrink before it stops (--stall). */
export const DEFAULT_STALL_SECONDS = 90;

/** Messages of the DLQ: visible, and in flight (received by the function and not yet deleted). */
export interface Depth {
  readonly visible: number;
  readonly inFlight: number;
}

/** The ledger DLQ's mapping: on AWS its UUID, locally a flag file. */
export interface RedriveSwitch {
  /** What it is, for the lines printed (`mapping 6e1f…`, `flag file …`). */
  readonly name: string;
  /** Turns it on; resolves once the source receives (the mapping Enabled). */
  enable(): Promise<void>;
  /** Turns it off (best effort is the caller's: this throws when it could not). */
  disable(): Promise<void>;
  /** Its state now: Lambda's word for the mapping (Enabled, Disabled, Enabling, ...), locally Enabled or Disabled. */
  state(): Promise<string>;
}

/** States in which the ledger function reads (or is about to read) its DLQ. */
const ON_STATES: readonly string[] = ['Enabled', 'Enabling'];

/** Whether a switch in `state` lets the ledger function read its DLQ. */
export function isOn(state: string): boolean {
  return ON_STATES.includes(state);
}

export interface DrainOptions {
  readonly depth: () => Promise<Depth>;
  readonly source: RedriveSwitch;
  /** Stop when the DLQ has not shrunk for this long (what is left fails again and again). */
  readonly stallMs: number;
  /** How often the DLQ is read. */
  readonly pollMs: number;
  /** Progress lines (stderr). */
  readonly progress: (line: string) => void;
  /** Ctrl-C: stop, and disable the source. */
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface DrainResult {
  /** Visible + in flight before. */
  readonly before: number;
  /** Visible + in flight when it stopped. */
  readonly after: number;
  /** Why it stopped. */
  readonly ended: 'empty' | 'nothing-to-do' | 'stalled' | 'interrupted';
  /** Whether the source is off again (true when it was never turned on). */
  readonly disabled: boolean;
  /** Why disabling failed, when it did. */
  readonly disableError?: string;
}

const total = (d: Depth) => d.visible + d.inFlight;

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}

/**
 * Enables the source, waits until the DLQ is empty (nothing visible or in flight, read twice in a
 * row: the counts are approximate) or has not shrunk for `stallMs`, or `signal` aborts; then
 * disables it, whatever happened (an error too: it is rethrown after the disable).
 */
export async function drainLedgerDeadLetters(options: DrainOptions): Promise<DrainResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  const before = total(await options.depth());
  if (before === 0) return { before, after: 0, ended: 'nothing-to-do', disabled: true };
  let after = before;
  let ended: DrainResult['ended'] = 'stalled';
  let failure: unknown;
  try {
    options.progress(`Enabling ${options.source.name} on the ledger DLQ (${before} message(s))...`);
    await options.source.enable();
    options.progress(`Enabled: the ledger function reads the ledger DLQ.`);
    let least = before;
    let progressAt = now();
    let zeros = 0;
    let shown = '';
    for (;;) {
      if (options.signal?.aborted) {
        ended = 'interrupted';
        break;
      }
      await sleep(options.pollMs, options.signal);
      if (options.signal?.aborted) {
        ended = 'interrupted';
        break;
      }
      const depth = await options.depth();
      after = total(depth);
      const line = `  ${after} left (${depth.visible} visible, ${depth.inFlight} in flight)`;
      if (line !== shown) options.progress(line);
      shown = line;
      zeros = after === 0 ? zeros + 1 : 0;
      if (zeros >= 2) {
        ended = 'empty';
        break;
      }
      if (after < least) {
        least = after;
        progressAt = now();
      } else if (now() - progressAt >= options.stallMs) {
        ended = 'stalled';
        break;
      }
    }
  } catch (error) {
    failure = error;
  }
  let disabled = true;
  let disableError: string | undefined;
  try {
    await options.source.disable();
  } catch (error) {
    disabled = false;
    disableError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  if (failure !== undefined) {
    const what = failure instanceof Error ? failure.message : String(failure);
    throw new Error(
      `${what} (${disabled ? `${options.source.name} was disabled again` : `could not disable ${options.source.name}: ${disableError ?? ''}; disable it by hand`})`,
    );
  }
  return { before, after, ended, disabled, ...(disableError !== undefined ? { disableError } : {}) };
}

/** The ledger DLQ's depth, by GetQueueAttributes. */
export function queueDepth(sqs: SQSClient, queueUrl: string): () => Promise<Depth> {
  return async () => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  };
}

/** The local switch: a flag file the local ledger consumer looks for before each receive of the DLQ. */
export function localRedriveSwitch(flagFile: string): RedriveSwitch {
  return {
    name: `the local ledger consumer's DLQ source (flag file ${flagFile})`,
    enable: () => {
      writeFileSync(flagFile, `ledger DLQ redrive since ${new Date().toISOString()}\n`);
      return Promise.resolve();
    },
    disable: () => {
      rmSync(flagFile, { force: true });
      return existsSync(flagFile) ? Promise.reject(new Error(`${flagFile} is still there`)) : Promise.resolve();
    },
    state: () => Promise.resolve(existsSync(flagFile) ? 'Enabled' : 'Disabled'),
  };
}

/**
 * The mapping on AWS, by UUID (the stack output LedgerDeadLetterMappingId): UpdateEventSourceMapping
 * to switch it, GetEventSourceMapping until it is Enabled (at most `enableTimeoutMs`).
 */
export function awsRedriveSwitch(
  settings: ClientSettings,
  uuid: string,
  options: { readonly enableTimeoutMs?: number; readonly pollMs?: number } = {},
): RedriveSwitch {
  const source = { id: uuid, queue: 'ledger DLQ', state: 'Unknown' };
  return {
    name: `the ledger function's mapping ${uuid}`,
    enable: async () => {
      const aws = await resolveAws(settings);
      await setSourceEnabled(aws, source, true);
      const deadline = Date.now() + (options.enableTimeoutMs ?? 120_000);
      for (;;) {
        const { state } = await readSource(aws, uuid);
        if (state === 'Enabled') return;
        if (Date.now() > deadline) throw new Error(`the mapping ${uuid} is still ${state}, not Enabled`);
        await abortableSleep(options.pollMs ?? 2_000);
      }
    },
    disable: async () => {
      await setSourceEnabled(await resolveAws(settings), source, false);
    },
    state: async () => (await readSource(await resolveAws(settings), uuid)).state,
  };
}
