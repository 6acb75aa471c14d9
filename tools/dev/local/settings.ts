/**
 * The local pipeline reads the same settings as `cdk synth`: the `context`
 * block of cdk.json (and `CDK_CONTEXT_JSON`, as the CDK CLI passes context to an
 * app), through the same validation.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  resolveSettings,
  settingsFromContext,
  splitContextSettings,
  type PipelineSettings,
  type ResolvedSettings,
} from '../../../lib/settings';
import { REPO_ROOT } from './paths';

export function readCdkContext(file = path.join(REPO_ROOT, 'cdk.json')): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const context = (parsed as { context?: unknown }).context;
  return typeof context === 'object' && context !== null ? (context as Record<string, unknown>) : {};
}

/**
 * Context given the way the CDK CLI hands it to an app (`CDK_CONTEXT_JSON`, a JSON object), so a
 * setting can be tried without editing cdk.json:
 * `CDK_CONTEXT_JSON='{"emailPipeline:callbackUrl":"http://127.0.0.1:9000/hooks"}' npm start`.
 */
export function environmentContext(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const text = env.CDK_CONTEXT_JSON;
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('CDK_CONTEXT_JSON must be a JSON object of context keys (it is not JSON)');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('CDK_CONTEXT_JSON must be a JSON object of context keys');
  }
  return parsed as Record<string, unknown>;
}

/** Settings from cdk.json (and CDK_CONTEXT_JSON over it), with `overrides` on top (tests shorten timeouts this way). */
export function loadLocalSettings(overrides: Partial<PipelineSettings> = {}): ResolvedSettings {
  const context = { ...readCdkContext(), ...environmentContext() };
  return resolveSettings({ ...splitContextSettings(settingsFromContext(context)).pipeline, ...overrides });
}
