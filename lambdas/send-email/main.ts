/**
 * The Lambda entry point (lib/construct/bundling.ts bundles this file): the container's handler, built
 * once at init by the composition root (handler.ts), which the in-process harnesses import
 * without building one.
 */
import { createContainerHandler } from './handler';

export const handler = createContainerHandler();
