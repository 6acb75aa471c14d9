/**
 * The flow of one queue record, top to bottom: parse -> schedule -> claim -> confirm -> send -> outcome,
 * each a call into its stage:
 *   parse.ts     the SNS envelope in the SQS record, the dedupe key;
 *   schedule.ts  a message whose sendAt is still ahead waits in the schedule queue until due;
 *   claim/       the Powertools idempotency claim of the key (persistence.ts: its persistence layer);
 *   confirm.ts   confirm before resend: an earlier attempt of unknown fate is looked up in the ledger;
 *   send/        pacing, the circuit breaker, the SES request and its retry strategy;
 *   outcome/     a retry with backoff within the retry budget, or the DLQ; the report of each record.
 * Every record ends in one decision: sent, duplicate, dead-lettered, retry, scheduled (deferred
 * until its sendAt) or cancelled (a copy of a cancelled key, suppressed at its claim). The stages come
 * built (handler.ts, once per container); the flow's own state is the named fields of RecordFlow.
 */
import type { Context, SQSRecord } from 'aws-lambda';
import type { HandlerSettings } from '../kernel/environment';
import { PipelineError } from '../kernel/errors';
import { cancelMarkOf } from '../kernel/ledger/cancel-mark';
import { createKeyClaims, type ClaimDeps, type KeyClaims } from './claim/claim';
import { classifyIdempotencyError, classifySesError, unexpectedError } from './classify';
import type { SendConfirmation } from './confirm';
import type { Outcome } from './outcome/outcome';
import { parseRecord, type ParsedRecord } from './parse';
import type { Schedule } from './schedule';
import type { Sender, SendRequest, SendResult } from './send/sender';

/** What the `sent` line adds when the ledger showed an earlier attempt had been sent. */
const CONFIRMED_BY_SES_EVENT = {
  confirmedBySesEvent: true,
  note: 'an earlier attempt was accepted by SES (its SES event is in the ledger): not sent again',
} as const;

/** The stages a flow calls, built once per container (handler.ts). */
export interface FlowStages {
  /** Whose envelopes are sent (parse.ts), and whether a send goes on while the store is down (failOpen). */
  readonly settings: Pick<
    HandlerSettings,
    'topicArn' | 'highPriorityTopicArn' | 'teams' | 'senderAddress' | 'failOpen'
  >;
  /** What the claim stage is built from (claim/claim.ts): its store (claim/persistence.ts in production), its window, a clock. */
  readonly claim: ClaimDeps;
  /** The schedule stage (schedule.ts). @default none: a sendAt is not waited for */
  readonly schedule?: Schedule | undefined;
  /** The confirm stage (confirm.ts). @default none: every retry sends, as before the ledger */
  readonly confirm?: SendConfirmation | undefined;
  readonly sender: Sender;
  readonly outcome: Outcome;
  readonly now: () => number;
}

/** SES's answer for a key, and whether it came from the ledger rather than from a send of this record. */
interface Answer {
  readonly result: SendResult;
  readonly confirmedBySesEvent: boolean;
}

export class RecordFlow {
  /** The stages, built once per container. */
  readonly #stages: FlowStages;
  /** The claim stage; what runs under a claim is #confirmAndSend. */
  readonly #claims: KeyClaims;
  /** The invocation being served: its deadline bounds the sends and the completion writes. */
  #context: Context | undefined;
  /** SES's answer by key, from the send until its record is done (the completion write may fail after it). */
  readonly #answers = new Map<string, Answer>();

  constructor(stages: FlowStages) {
    this.#stages = stages;
    this.#claims = createKeyClaims(stages.claim, (request) => this.#confirmAndSend(request));
  }

  /** Call once per invocation, before the records. */
  registerContext(context: Context): void {
    this.#context = context;
    this.#claims.registerContext(context);
  }

  /** Processes one record; resolves when it is done with (sent, duplicate or dead-lettered), throws to retry it. */
  async process(record: SQSRecord): Promise<void> {
    const { settings, outcome } = this.#stages;
    // 1. parse: a record that cannot be read goes to its outcome (the DLQ) at once.
    let parsed: ParsedRecord;
    try {
      parsed = parseRecord(record, settings);
    } catch (error) {
      await outcome.settle(record, unexpectedError(error), undefined);
      return;
    }
    // 1b. schedule: a message not yet due goes back to the queue until its sendAt, unclaimed.
    try {
      if ((await this.#stages.schedule?.(record, parsed)) === 'deferred') return;
    } catch (error) {
      await outcome.settle(record, error instanceof PipelineError ? error : unexpectedError(error), parsed);
      return;
    }
    try {
      // 1b. the email as the claim hashes it: with the ETags of the objects it attaches.
      parsed = { ...parsed, email: await this.#stages.sender.prepare(parsed.email) };
      // 2. claim the key; under the claim, 3. confirm and 4. send (#confirmAndSend).
      const result = await this.#claims.claimAndSend(sendRequestOf(parsed));
      // 5. outcome: sent, or a duplicate of an email already sent.
      if (!result.duplicate) {
        const confirmed = this.#answers.get(parsed.key)?.confirmedBySesEvent ? CONFIRMED_BY_SES_EVENT : {};
        outcome.report.sent(record, parsed, result, confirmed);
        return;
      }
      // A cancelled key's record (its cancel mark) is met like a sent one's: nothing is sent.
      const cancelled = cancelMarkOf(result);
      if (cancelled) outcome.report.cancelled(record, parsed, cancelled);
      else outcome.report.duplicate(record, parsed, result);
    } catch (error) {
      // 5. outcome of a failure: to the DLQ or retried, unless SES took the email after all.
      const failure = classifyIdempotencyError(error, parsed.key);
      if (failure === 'completion-write-failed') await this.#completeAfterFailedWrite(record, parsed, error);
      else if (failure.code === 'StoreUnavailable' && settings.failOpen)
        await this.#sendUnprotected(record, parsed, failure);
      else await outcome.settle(record, failure, parsed);
    } finally {
      this.#answers.delete(parsed.key);
      // A later record of this batch with the same key may hold a claim of its own by now.
      if (!this.#claims.pending(parsed.key)) this.#stages.confirm?.done(parsed.key);
    }
  }

  /** 3. and 4., run under the key's claim: an earlier attempt the ledger shows SES took is not sent again. */
  async #confirmAndSend(request: SendRequest): Promise<SendResult> {
    const confirmed = await this.#stages.confirm?.beforeSend(request.key);
    if (confirmed) {
      this.#answers.set(request.key, { result: confirmed, confirmedBySesEvent: true });
      return confirmed;
    }
    const result = await this.#send(request);
    this.#answers.set(request.key, { result, confirmedBySesEvent: false });
    return result;
  }

  /** 4. send: through the breaker and the pacer, tagged with the claim's attempt, to SES. */
  async #send(request: SendRequest): Promise<SendResult> {
    const { sender, confirm } = this.#stages;
    const admitted = await sender.admit(request, () => this.#remainingMs());
    try {
      return await sender.send(request, admitted, confirm?.attemptOf(request.key));
    } catch (error) {
      // A send that may have been accepted leaves its claim marked for the next attempt (confirm.ts).
      confirm?.afterFailedSend(request.key, error as PipelineError);
      throw error;
    }
  }

  /** Fail-open: sends without the idempotency check, counted; a failed send is handled as any other. */
  async #sendUnprotected(record: SQSRecord, parsed: ParsedRecord, storeError: PipelineError): Promise<void> {
    let result: SendResult;
    try {
      result = await this.#confirmAndSend(sendRequestOf(parsed));
    } catch (sendError) {
      await this.#stages.outcome.settle(record, classifySesError(sendError), parsed);
      return;
    }
    this.#stages.outcome.report.sentWithoutCheck(record, parsed, result.sesMessageId, storeError);
  }

  /**
   * SES accepted the email; only the completion write failed. Retrying the message would
   * send it again, so it is done with either way; what is left is to record the completion.
   */
  async #completeAfterFailedWrite(record: SQSRecord, parsed: ParsedRecord, error: unknown): Promise<void> {
    const { now, outcome } = this.#stages;
    // The send stored SES's answer before Powertools tried (and failed) to write it.
    const result = this.#answers.get(parsed.key)?.result ?? {
      sesMessageId: 'unknown',
      sentAt: new Date(now()).toISOString(),
    };
    const attempts = await this.#claims.writeCompletion({ key: parsed.key, email: parsed.email }, result, () =>
      this.#remainingMs(),
    );
    outcome.report.sentAfterFailedWrite(record, parsed, result.sesMessageId, attempts, error);
  }

  /** The invocation's time left (0 before the first). */
  #remainingMs(): number {
    return this.#context?.getRemainingTimeInMillis() ?? 0;
  }
}

/** What the send stage is given of a parsed record: its key, its email, and its team when it has one. */
function sendRequestOf(parsed: ParsedRecord): SendRequest {
  const team = parsed.team !== undefined ? { team: parsed.team } : {};
  return { key: parsed.key, email: parsed.email, ...team };
}
