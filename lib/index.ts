/**
 * The package's public API: the construct (EmailPipeline, EmailPipelineStack,
 * EmailPipelineMonitoring and their props and constants), the settings, and the
 * publisher client.
 */
export * from './construct/email-pipeline';
export type { Callbacks } from './construct/callbacks/callbacks';
export type { CallbackEndpoints } from './construct/pipeline/endpoints';
export { DLQ_RETENTION } from './construct/common/queues';
export { DEFAULT_SERVICE_NAME, RUNTIME } from './construct/common/runtime';
export * from './construct/email-pipeline-stack';
export * from './construct/monitoring/monitoring';
export type { LogLevel, PipelineSettings, ResolvedSettings, ResolvedTeam, TeamSettings } from './settings';
export { SettingsError, resolveSettings, settingsFromContext } from './settings';
export * from './publisher';
