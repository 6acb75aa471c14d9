export * from './email-pipeline';
export * from './email-pipeline-stack';
export * from './monitoring';
export type { LogLevel, PipelineSettings, ResolvedSettings } from './config';
export { SettingsError, resolveSettings, settingsFromContext } from './config';
export * from './publisher';
