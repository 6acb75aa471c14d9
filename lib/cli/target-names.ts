/** The names the CLI's target resolution shares with stack-outputs.ts: environment variables and output marks. */
/** The environment variables that name a target when the flags do not. */
export const TARGET_ENV = { stack: 'EMAIL_PIPELINE_STACK', pipeline: 'EMAIL_PIPELINE_NAME' } as const;
/** The field of an output value (a JSON object) that marks it as a pipeline's, and its monitoring's. */
export const PIPELINE_MARK = 'emailPipeline';
export const MONITORING_MARK = 'emailPipelineMonitoring';
/** The newest version of those objects this CLI reads. */
export const OUTPUTS_VERSION = 1;
/** The name of this package (how the CLI tells it runs inside its own repository). */
export { PACKAGE_NAME } from '../package-info';
