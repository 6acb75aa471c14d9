/**
 * The confirm stage: confirm before any resend. SES has no idempotency token, so a send whose
 * answer was lost (a timeout, reset or 5xx after the request went out; an invocation that died
 * after SES accepted) cannot be told apart from one SES never saw, except by SES's own events:
 * every send is tagged with its dedupe key, and the ledger function records the `Send` (and
 * later) events per key. Only events bound to one of the key's own attempts count (binding.ts):
 * each claim is written with a random attempt id that its send carries as a tag, so an event
 * planted for the key (a copy of a real one, or one made up) cannot stop a send.
 *
 * Which claims took over an attempt of unknown fate is found at no extra request by the claim
 * stage's persistence layer (claim/persistence.ts); this module decides, for such a claim,
 * whether to send: the ledger shows SES took the lost attempt (no send), the attempt is still
 * within the grace (retry later, without sending), or the grace is over (send again, counted).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { eventsOf, statusOfType } from '../kernel/ledger/events';
import { ledgerKey } from '../kernel/ledger/schema';
import { keyTeam } from '../kernel/ledger/binding';
import { teamOfKey } from '../kernel/teams';
import type { ConfirmSettings } from '../kernel/environment';
import { markDeadLettered, readLedgerItem } from '../runtime/ledger-store';
import { CONFIRM_METRIC } from '../kernel/names';
import { RetryableError, type PipelineError } from '../kernel/errors';
import type { LedgerAwarePersistenceLayer, SendAttempt } from './claim/persistence';
import type { DeadLetterNotice } from './outcome/dead-letter-notice';

/**
 * An unknown-fate send within the grace: retried without sending, at a time of its own rather
 * than the usual backoff, so that waiting for an SES event never uses up the receive budget:
 * once soon (at a tenth of the grace, when the event is usually in), then when the grace ends.
 */
export class AwaitingSendConfirmationError extends RetryableError {
  constructor(
    message: string,
    /** When to look again, in seconds. */
    readonly retryAfterSeconds: number,
  ) {
    super('AwaitingSendConfirmation', message);
  }
}

/** The retry delay a failure asks for itself (see {@link AwaitingSendConfirmationError}), if any. */
export function requestedRetrySeconds(failure: PipelineError): number | undefined {
  return failure instanceof AwaitingSendConfirmationError ? failure.retryAfterSeconds : undefined;
}

/** When to look again for the event of an attempt `waitedMs` ago, within a grace of `graceSeconds`. */
export function confirmationRetrySeconds(waitedMs: number, graceSeconds: number): number {
  const waited = waitedMs / 1000;
  const next = waited < graceSeconds / 10 ? graceSeconds / 10 : graceSeconds;
  return Math.max(1, Math.ceil(next - waited));
}

/** What SES answered for an email, as the pipeline stores it. */
export interface ConfirmedSend {
  readonly sesMessageId: string;
  readonly sentAt: string;
  /** The attempt SES accepted (binding.ts): events of another SES message id are not bound to it. */
  readonly attemptId?: string;
}

export interface SendConfirmation {
  /**
   * Before a send: when this claim took over an unknown-fate attempt, consults the ledger.
   * Returns SES's answer when the ledger has the email (no send); undefined to send; throws a
   * retryable AwaitingSendConfirmation while the lost attempt is within the grace.
   */
  beforeSend(key: string): Promise<ConfirmedSend | undefined>;
  /** A send failed and may have been accepted: the claim stays marked for the next attempt. */
  afterFailedSend(key: string, failure: PipelineError): void;
  /** The record is being dead-lettered: the ledger item says so (failure path only). */
  deadLettered(key: string, failure: PipelineError): Promise<void>;
  /** What the send of this key's current claim carries to bind its SES events to it. */
  attemptOf(key: string): SendAttempt | undefined;
  /** The key's record is done with (sent, duplicate, dead-lettered or retried). */
  done(key: string): void;
}

export interface ConfirmDeps {
  readonly settings: ConfirmSettings;
  readonly persistence: LedgerAwarePersistenceLayer;
  readonly dynamodb: Pick<DynamoDBClient, 'send'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now?: () => number;
  /** Tells a dead-lettered key's callback (dead-letter-notice.ts). @default none: no callbacks */
  readonly notice?: DeadLetterNotice;
  /** The pipeline's teams: a team's key's dead-letter mark names its team (deliveries --team). @default none */
  readonly teamNames?: readonly string[];
}

export function createSendConfirmation(deps: ConfirmDeps): SendConfirmation {
  const { settings, persistence, dynamodb, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const table = settings.ledgerTableName;

  async function beforeSend(key: string): Promise<ConfirmedSend | undefined> {
    const lost = persistence.takeUnknownFate(key);
    if (lost === undefined || !table) return undefined;
    const attemptAt = lost.at;
    const itemKey = ledgerKey(key);
    let item: Awaited<ReturnType<typeof readLedgerItem>>;
    try {
      item = await readLedgerItem(dynamodb, table, itemKey, now());
    } catch (error) {
      persistence.leaveUnknownFate(key, attemptAt);
      throw new RetryableError(
        'LedgerUnavailable',
        `could not read the send ledger to confirm an earlier attempt: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    // Only an event of one of the lost attempts proves SES took it: any other could be planted.
    const bound = eventsOf(item).filter(
      (e) => e.attemptId !== undefined && lost.attemptIds.has(e.attemptId) && e.sesMessageId && statusOfType(e.type),
    );
    const sent = bound.find((e) => e.type === 'Send') ?? bound[0];
    if (sent?.sesMessageId && sent.attemptId) {
      metrics.addMetric(CONFIRM_METRIC.confirmedBySesEvent, MetricUnit.Count, 1);
      return { sesMessageId: sent.sesMessageId, sentAt: sent.at, attemptId: sent.attemptId };
    }
    const waitedMs = now() - attemptAt;
    if (waitedMs < settings.graceSeconds * 1000) {
      persistence.leaveUnknownFate(key, attemptAt);
      metrics.addMetric(CONFIRM_METRIC.awaitingConfirmation, MetricUnit.Count, 1);
      throw new AwaitingSendConfirmationError(
        `an earlier attempt ${Math.round(waitedMs / 1000)} s ago may have been accepted by SES; waiting up to ${settings.graceSeconds} s for its SES event before sending again`,
        confirmationRetrySeconds(waitedMs, settings.graceSeconds),
      );
    }
    metrics.addMetric(CONFIRM_METRIC.unconfirmedResends, MetricUnit.Count, 1);
    logger.warn('no SES event for an earlier attempt after the grace; sending again (may deliver twice)', {
      dedupeKey: key,
      ledgerKey: itemKey,
      attemptAt: new Date(attemptAt).toISOString(),
      graceSeconds: settings.graceSeconds,
    });
    return undefined;
  }

  return {
    beforeSend,
    afterFailedSend: (key, failure) => {
      if (table && failure.failureClass === 'ambiguous') persistence.leaveUnknownFate(key, now());
    },
    deadLettered: async (key, failure) => {
      const at = new Date(now()).toISOString();
      let sequence: number | undefined;
      try {
        if (table) {
          sequence = await markDeadLettered(
            dynamodb,
            table,
            ledgerKey(key),
            { at, code: failure.code, reason: failure.message.slice(0, 512) },
            settings.retentionSeconds,
            keyTeam(teamOfKey(deps.teamNames, key), key),
          );
        }
      } catch (error) {
        // The DLQ entry is what matters; the mark is for the status lookup.
        logger.warn('could not mark the ledger item dead-lettered', {
          dedupeKey: key,
          error: error instanceof Error ? error.message : String(error),
        });
      }
      await deps.notice?.(key, failure.code, at, sequence ?? 0);
    },
    attemptOf: (key) => persistence.attemptOf(key),
    done: (key) => persistence.forget(key),
  };
}
