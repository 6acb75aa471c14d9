/**
 * The callback function's settings, read once from its environment (lambdas/kernel/callbacks/
 * names.ts names the variables); every error names the variable at fault.
 */
import { CALLBACK_ENV, type CallbackTarget, type CallbackTargets } from '../kernel/callbacks/names';
import { EnvReader, type Env } from '../kernel/environment';

export interface CallbackSettings {
  readonly tableName: string;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly targets: CallbackTargets;
  readonly retryBaseSeconds: number;
  readonly retryWindowSeconds: number;
  readonly timeoutMs: number;
  /** Locally only: 127.0.0.1 and http may be called. */
  readonly allowPrivateAddresses: boolean;
}

function readTargets(text: string): CallbackTargets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`Environment variable ${CALLBACK_ENV.targets} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`Environment variable ${CALLBACK_ENV.targets} must be a JSON object: team -> callback`);
  }
  for (const [team, target] of Object.entries(parsed as Record<string, Partial<CallbackTarget>>)) {
    const ok =
      typeof target?.url === 'string' && (typeof target.secretArn === 'string') !== (typeof target.secret === 'string');
    if (!ok) {
      throw new Error(
        `Environment variable ${CALLBACK_ENV.targets}: the callback of ${JSON.stringify(team)} needs a url and one of secretArn or secret`,
      );
    }
  }
  return parsed as CallbackTargets;
}

/** Reads the callback function's settings; throws naming the variable at fault. */
export function readCallbackSettings(env: Env = process.env): CallbackSettings {
  const read = new EnvReader(env);
  return {
    tableName: read.required(CALLBACK_ENV.tableName),
    queueUrl: read.required(CALLBACK_ENV.queueUrl),
    deadLetterQueueUrl: read.required(CALLBACK_ENV.deadLetterQueueUrl),
    targets: readTargets(read.required(CALLBACK_ENV.targets)),
    retryBaseSeconds: read.positiveInt(CALLBACK_ENV.retryBaseSeconds),
    retryWindowSeconds: read.positiveInt(CALLBACK_ENV.retryWindowSeconds),
    timeoutMs: read.positiveInt(CALLBACK_ENV.timeoutMs),
    allowPrivateAddresses: read.optional(CALLBACK_ENV.allowPrivateAddresses) === 'true',
  };
}
