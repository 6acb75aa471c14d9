/**
 * The Lambda entry point: glue only. The container's clients and pipeline are built once,
 * at init (container.ts); everything else lives in pipeline.ts and its pure modules.
 */
import { createContainerHandler } from './container';

export const handler = createContainerHandler();
