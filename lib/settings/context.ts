/**
 * Settings from CDK context (cdk.json `context`, `-c emailPipeline:key=value`): the declared keys
 * only, each coerced by its declared kind, and the app's own options (principals, templates, the
 * alarm address) checked.
 */
import { closest } from 'fastest-levenshtein';
import { SETTINGS, type SettingKind } from './declaration';
import { configuredAddressProblem, SettingsError } from './rules';
import type { AppContextSettings, ContextSettings, PipelineSettings } from './types';

/** Context values are namespaced so they cannot clash with CDK feature flags. */
export const CONTEXT_PREFIX = 'emailPipeline:';

/**
 * What may follow `emailPipeline:` (cdk.json `context` or `-c key=value`), and
 * its kind: the declared settings with a context key. A key not listed here
 * fails the synth.
 */
const CONTEXT_SETTINGS = Object.entries(SETTINGS).filter(([, declaration]) => declaration.contextKey);

function coerce(key: string, kind: SettingKind, raw: unknown): unknown {
  // `-c key=value` always gives strings; cdk.json gives JSON types.
  if (kind === 'object') {
    let value = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        throw new SettingsError(key, raw, 'must be a JSON object (with -c, written as JSON text)');
      }
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new SettingsError(key, raw, 'must be a JSON object (with -c, written as JSON text)');
    }
    return value;
  }
  if (kind === 'string') {
    if (typeof raw !== 'string') throw new SettingsError(key, raw, 'must be a string');
    return raw;
  }
  if (kind === 'list') {
    const items = typeof raw === 'string' ? raw.split(',').map((item) => item.trim()) : raw;
    if (!Array.isArray(items) || !items.every((item) => typeof item === 'string' && item !== '')) {
      throw new SettingsError(key, raw, 'must be a comma-separated string or a list of non-empty strings');
    }
    return items as string[];
  }
  if (kind === 'boolean') {
    if (raw === true || raw === 'true') return true;
    if (raw === false || raw === 'false') return false;
    throw new SettingsError(key, raw, 'must be true or false');
  }
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) throw new SettingsError(key, raw, 'must be a whole number');
  return n;
}

/** Refuses every `emailPipeline:` key that is not declared, naming the closest known one. */
export function checkContextKeys(context: Readonly<Record<string, unknown>>): void {
  const known = CONTEXT_SETTINGS.map(([name]) => name);
  for (const key of Object.keys(context)) {
    if (!key.startsWith(CONTEXT_PREFIX)) continue;
    const name = key.slice(CONTEXT_PREFIX.length);
    if (known.includes(name)) continue;
    const suggestion = closest(
      name.toLowerCase(),
      known.map((k) => k.toLowerCase()),
    );
    const match = known.find((k) => k.toLowerCase() === suggestion);
    throw new SettingsError(
      key,
      context[key],
      `is not a known setting${match ? `; did you mean ${CONTEXT_PREFIX}${match}?` : ''} (known: ${known.join(', ')})`,
    );
  }
}

/** A 12-digit account id, or an IAM role or user ARN: who may publish. */
export const PUBLISHER_PRINCIPAL = /^(?:\d{12}|arn:aws[a-z-]*:iam::\d{12}:(?:root|(?:role|user)\/[\w+=,.@/-]{1,512}))$/;

/**
 * An IAM role or user ARN (with a path or not): what `aws:PrincipalArn` holds for a principal named
 * in an exemption (a role's sessions carry the role's ARN).
 */
export const ROLE_OR_USER_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(?:role|user)\/[\w+=,.@/-]{1,512}$/;

/** The principal lists of the app's settings: what each entry must be, and the reason given when it is not. */
const PRINCIPAL_LISTS = [
  {
    name: 'publisherPrincipals',
    rule: PUBLISHER_PRINCIPAL,
    reason:
      'each must be a 12-digit account id or an IAM ARN (arn:aws:iam::123456789012:role/name, :user/name or :root)',
  },
  {
    name: 'redrivePrincipals',
    rule: ROLE_OR_USER_ARN,
    reason:
      'each must be an IAM role or user ARN (arn:aws:iam::123456789012:role/name or :user/name); accounts are not accepted',
  },
  {
    name: 'cancelPrincipals',
    rule: ROLE_OR_USER_ARN,
    reason:
      'each must be an IAM role or user ARN (arn:aws:iam::123456789012:role/name or :user/name); accounts are not accepted',
  },
] as const;

function checkAppSettings(settings: AppContextSettings): void {
  for (const { name, rule, reason } of PRINCIPAL_LISTS) {
    for (const principal of settings[name] ?? []) {
      if (!rule.test(principal)) throw new SettingsError(`${CONTEXT_PREFIX}${name}`, principal, reason);
    }
  }
  if (settings.alarmEmail !== undefined) {
    const problem = configuredAddressProblem(settings.alarmEmail);
    if (problem !== undefined) throw new SettingsError(`${CONTEXT_PREFIX}alarmEmail`, settings.alarmEmail, problem);
  }
}

/**
 * The `emailPipeline:` values present in `context`, by setting name, each coerced by its declared
 * kind (no required keys, no cross-checks): what a user typed.
 */
export function contextValues(context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, { kind }] of CONTEXT_SETTINGS) {
    const raw = context[CONTEXT_PREFIX + key];
    if (raw === undefined || raw === null || raw === '') continue;
    out[key] = coerce(CONTEXT_PREFIX + key, kind, raw);
  }
  return out;
}

/**
 * Reads settings from CDK context (`emailPipeline:senderAddress` and so on):
 * the whole context, as `app.node.getAllContext()` or cdk.json's `context`
 * give it. Unknown `emailPipeline:` keys are refused.
 */
export function settingsFromContext(context: Readonly<Record<string, unknown>>): ContextSettings {
  checkContextKeys(context);
  const out: Record<string, unknown> = { ...contextValues(context) };
  for (const required of ['senderAddress', 'sesIdentity'] as const) {
    if (out[required] === undefined) {
      throw new SettingsError(
        CONTEXT_PREFIX + required,
        undefined,
        `is required: set it in cdk.json "context" or pass -c ${CONTEXT_PREFIX}${required}=...`,
      );
    }
  }
  checkAppSettings(out as AppContextSettings);
  return out as unknown as ContextSettings;
}

/** Splits context settings into the pipeline's and the app's own. */
export function splitContextSettings(settings: ContextSettings): {
  readonly pipeline: PipelineSettings;
  readonly app: AppContextSettings;
} {
  const { publisherPrincipals, redrivePrincipals, cancelPrincipals, sesTemplateNames, alarmEmail, ...pipeline } =
    settings;
  return {
    pipeline,
    app: {
      ...(publisherPrincipals !== undefined ? { publisherPrincipals } : {}),
      ...(redrivePrincipals !== undefined ? { redrivePrincipals } : {}),
      ...(cancelPrincipals !== undefined ? { cancelPrincipals } : {}),
      ...(sesTemplateNames !== undefined ? { sesTemplateNames } : {}),
      ...(alarmEmail !== undefined ? { alarmEmail } : {}),
    },
  };
}
