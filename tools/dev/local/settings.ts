/**
 * The local pipeline reads the same settings as `cdk synth`: the `context`
 * block of cdk.json, through the same validation.
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

/** Settings from cdk.json, with `overrides` on top (tests shorten timeouts this way). */
export function loadLocalSettings(overrides: Partial<PipelineSettings> = {}): ResolvedSettings {
  const context = readCdkContext();
  return resolveSettings({ ...splitContextSettings(settingsFromContext(context)).pipeline, ...overrides });
}
