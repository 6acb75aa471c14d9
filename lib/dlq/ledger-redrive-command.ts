/**
 * `email-pipeline dlq redrive --queue ledger` as the CLI runs it (ledger-redrive.ts drains): which
 * switch (the stack's mapping, or the local flag file), Ctrl-C, and what is printed: progress on
 * stderr, what it did on stdout, and why messages remain (exit 1) or the switch is still on. And
 * `--stop`: the switch turned off when a redrive was interrupted and left it on (verify finds that).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Io } from '../cli/command';
import { OperationError } from '../cli/errors';
import {
  DEFAULT_STALL_SECONDS,
  awsRedriveSwitch,
  drainLedgerDeadLetters,
  isOn,
  localRedriveSwitch,
  queueDepth,
  type DrainResult,
  type RedriveSwitch,
} from './ledger-redrive';
import { output, type Target } from '../cli/target';

/** The sentence for a switch left on, and how to turn it off by hand. */
function leftOn(target: Target, source: RedriveSwitch, result: DrainResult): string {
  const byHand = target.local
    ? `remove ${output(target, 'LedgerRedriveFile')}`
    : `aws lambda update-event-source-mapping --uuid ${output(target, 'LedgerDeadLetterMappingId')} --no-enabled`;
  return (
    ` Could not disable ${source.name} (${result.disableError ?? 'unknown error'}): the ledger function keeps reading ` +
    `its DLQ; email-pipeline dlq redrive --queue ledger --stop${target.flags} disables it (or ${byHand}).`
  );
}

const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/** What the redrive did, in one line: before and after, and the switch's state. */
export function describeDrain(result: DrainResult, where: string, source: RedriveSwitch): string {
  const off = result.disabled ? ` ${capital(source.name)} is disabled again.` : '';
  if (result.ended === 'nothing-to-do') return `${capital(where)} is empty: nothing to redrive.`;
  return `Redrove ${where} through the ledger function: ${result.before} message(s) before, ${result.after} after.${off}`;
}

/** The ledger DLQ's switch of `target`: the stack's mapping (by the output LedgerDeadLetterMappingId), or the local flag file. */
export function ledgerRedriveSwitch(target: Target): RedriveSwitch {
  return target.local
    ? localRedriveSwitch(output(target, 'LedgerRedriveFile'))
    : awsRedriveSwitch(target.clients.sqs, output(target, 'LedgerDeadLetterMappingId'));
}

/**
 * `dlq redrive --queue ledger --stop`: turns the switch off if it is on (a redrive interrupted before
 * it could, or one running now, which then stops draining), and says what it found, what it did
 * and what the DLQ still holds.
 */
export async function stopLedgerRedrive(
  sqs: SQSClient,
  target: Target,
  dlqUrl: string,
  where: string,
  json: boolean,
  io: Io,
): Promise<void> {
  const source = ledgerRedriveSwitch(target);
  const was = await source.state();
  const on = isOn(was);
  if (on) await source.disable();
  const depth = await queueDepth(sqs, dlqUrl)();
  const left = depth.visible + depth.inFlight;
  if (json) {
    io.out(JSON.stringify({ action: 'stop', queue: 'ledger', was, disabled: on, messages: left }));
    return;
  }
  const remain =
    left === 0
      ? `${capital(where)} is empty.`
      : `${left} message(s) remain in ${where} (dlq redrive --queue ledger redrives them).`;
  io.out(
    on
      ? `Disabled ${source.name} (it was ${was}): the ledger function no longer reads ${where}. ${remain}`
      : `${capital(source.name)} was already ${was}: nothing to stop. ${remain}`,
  );
}

/** Runs the drain against the target; throws OperationError (exit 1) when messages remain or it was interrupted. */
export async function redriveLedger(
  sqs: SQSClient,
  target: Target,
  dlqUrl: string,
  where: string,
  stall: number | undefined,
  json: boolean,
  io: Io,
): Promise<void> {
  const stallSeconds = stall ?? DEFAULT_STALL_SECONDS;
  const source = ledgerRedriveSwitch(target);
  const controller = new AbortController();
  const interrupt = () => {
    io.err('Interrupted: disabling the mapping...');
    controller.abort();
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let result: DrainResult;
  try {
    result = await drainLedgerDeadLetters({
      depth: queueDepth(sqs, dlqUrl),
      source,
      stallMs: stallSeconds * 1000,
      pollMs: target.local ? 500 : 2_000,
      progress: (line) => io.err(line),
      signal: controller.signal,
    });
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
  }
  io.out(
    json
      ? JSON.stringify({
          action: 'redrive',
          queue: 'ledger',
          before: result.before,
          after: result.after,
          ended: result.ended,
          disabled: result.disabled,
        })
      : describeDrain(result, where, source),
  );
  const stillOn = result.disabled ? '' : leftOn(target, source, result);
  if (result.ended === 'interrupted') {
    throw new OperationError(`Interrupted with ${result.after} message(s) left in ${where}.${stillOn}`);
  }
  if (result.ended === 'stalled') {
    throw new OperationError(
      `${result.after} message(s) remain in ${where}: it has not shrunk for ${stallSeconds} s, so the ` +
        'ledger function fails on them again (they return to the DLQ after its visibility timeout). Read the ledger log ' +
        'group ("unreadable SES event"), fix the cause and redrive again; or list and delete them (dlq list --queue ledger).' +
        stillOn,
    );
  }
  if (stillOn) throw new OperationError(stillOn.trim());
}
