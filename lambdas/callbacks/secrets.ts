/**
 * The signing keys of each callback: from Secrets Manager on AWS (the secret's JSON `key`, and
 * `previousKey` while a rotation is under way), kept for five minutes so a rotation reaches every
 * container within that; locally, the target's own `secret`.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CallbackSecretValue, CallbackTarget, CallbackTargets } from '../kernel/callbacks/names';

/** The keys (base64 or `whsec_…`) that sign a target's requests, the current one first. */
export type SigningKeys = (target: string) => Promise<readonly string[]>;

/** How long a secret read is trusted. */
export const SECRET_CACHE_MS = 5 * 60 * 1000;

/** The keys of a secret's JSON value; throws saying what is wrong (never the value). */
export function keysOfSecret(text: string | undefined, secretArn: string): readonly string[] {
  let value: Partial<CallbackSecretValue> | undefined;
  try {
    value = text === undefined ? undefined : (JSON.parse(text) as Partial<CallbackSecretValue>);
  } catch {
    value = undefined;
  }
  if (typeof value?.key !== 'string' || value.key === '') {
    throw new Error(`the callback secret ${secretArn} must be JSON with a "key" (and, rotating, a "previousKey")`);
  }
  return typeof value.previousKey === 'string' && value.previousKey !== ''
    ? [value.key, value.previousKey]
    : [value.key];
}

/** Signing keys read from Secrets Manager (or a target's own `secret`), cached per target. */
export function secretsManagerSigningKeys(
  targets: CallbackTargets,
  client: Pick<SecretsManagerClient, 'send'> = new SecretsManagerClient({}),
  now: () => number = Date.now,
): SigningKeys {
  const cache = new Map<string, { readonly keys: readonly string[]; readonly at: number }>();
  return async (target) => {
    const configured: CallbackTarget | undefined = targets[target];
    if (!configured) throw new Error(`no callback is configured for ${JSON.stringify(target)}`);
    if (configured.secret !== undefined) return [configured.secret];
    const arn = configured.secretArn ?? '';
    const cached = cache.get(arn);
    if (cached && now() - cached.at < SECRET_CACHE_MS) return cached.keys;
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    const keys = keysOfSecret(SecretString, arn);
    cache.set(arn, { keys, at: now() });
    return keys;
  };
}
