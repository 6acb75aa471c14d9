/**
 * The claim stage: Powertools idempotency on DynamoDB. A record's dedupe key is claimed with one
 * conditional write before its email is sent, and completed with SES's answer after: a copy then
 * finds the completed record (a duplicate, with the first send's answer) or a claim in progress
 * (retried later), and never sends again. The persistence layer is persistence.ts.
 */
import type { Context } from 'aws-lambda';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { HandlerSettings } from '../../kernel/environment';
import type { SendRequest, SendResult } from '../send/sender';

/** How long before the invocation's deadline the completion-write retries stop. */
export const COMPLETION_RETRY_MARGIN_MS = 1000;

/** What a claim ends in: SES's answer, marked `duplicate` when it is the first send's, replayed. */
export type Claimed = SendResult & { duplicate?: true };

export interface ClaimDeps {
  readonly settings: Pick<HandlerSettings, 'dedupeWindowSeconds' | 'keyPrefix'>;
  readonly persistenceStore: BasePersistenceLayer;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The claim stage of one container. */
export interface KeyClaims {
  /** Call once per invocation: a claim in progress expires with it. */
  registerContext(context: Context): void;
  /**
   * Claims the request's key and sends under the claim; a copy of a sent email resolves with the
   * first send's answer, marked duplicate. Throws what the idempotency layer or the send threw.
   */
  claimAndSend(request: SendRequest): Promise<Claimed>;
  /** True while a record of this batch claims (or waits to claim) the key. */
  pending(key: string): boolean;
  /**
   * SES accepted the email but the completion write failed (the store is down or
   * throttled). The claim is still "in progress", so copies that arrive now are
   * held back; keep writing the completion until shortly before the invocation
   * ends (`remainingMs`: its time left), when the claim expires and a copy could send
   * again. Resolves with the retry that wrote it, undefined if none did.
   */
  writeCompletion(request: SendRequest, result: SendResult, remainingMs: () => number): Promise<number | undefined>;
}

/** `send` is what runs under a claim of the request's key (the flow's confirm and send stages). */
export function createKeyClaims(deps: ClaimDeps, send: (request: SendRequest) => Promise<SendResult>): KeyClaims {
  const { settings, persistenceStore, now, sleep } = deps;
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'email',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: settings.dedupeWindowSeconds,
    // A replayed result is marked so the caller can tell a duplicate from a send.
    responseHook: (response) => ({ ...(response as unknown as SendResult), duplicate: true }),
  });
  const sendOnce = makeIdempotent(send, {
    persistenceStore,
    config,
    keyPrefix: settings.keyPrefix,
  }) as (request: SendRequest) => Promise<Claimed>;
  // Records of one batch that share a key run one after another: the second then finds the
  // first one's completed record (a duplicate, one conditional write) instead of an
  // "in progress" conflict that would cost it a trip back through the queue.
  const inFlight = new Map<string, Promise<unknown>>();

  return {
    registerContext: (context) => config.registerLambdaContext(context),

    async claimAndSend(request) {
      const previous = inFlight.get(request.key);
      const attempt = (previous ?? Promise.resolve()).catch(() => undefined).then(() => sendOnce(request));
      inFlight.set(request.key, attempt);
      try {
        return await attempt;
      } finally {
        if (inFlight.get(request.key) === attempt) inFlight.delete(request.key);
      }
    },

    pending: (key) => inFlight.has(key),

    async writeCompletion(request, result, remainingMs) {
      const deadline = now() + remainingMs() - COMPLETION_RETRY_MARGIN_MS;
      let pause = 100;
      for (let attempt = 1; now() + pause < deadline; attempt += 1) {
        await sleep(pause);
        try {
          // A hung store must not hold the invocation past its deadline: stop waiting for it there.
          await Promise.race([
            persistenceStore.saveSuccess(
              { key: request.key, email: request.email } as unknown as JSONValue,
              result as unknown as JSONValue,
            ),
            sleep(Math.max(0, deadline - now())).then(() => {
              throw new Error('the completion write did not answer before the deadline');
            }),
          ]);
          return attempt;
        } catch {
          pause = Math.min(pause * 2, 2000);
        }
      }
      return undefined;
    },
  };
}
