export * from './email-pipeline';
export * from './email-pipeline-stack';
export * from './monitoring';
export type { LogLevel, PipelineSettings, ResolvedSettings } from './settings';
export { SettingsError, resolveSettings, settingsFromContext } from './settings';
export * from './publisher';
