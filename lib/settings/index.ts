/**
 * The pipeline's settings: types, the declaration (the one home of every default, bound and
 * description), resolution, and reading them from CDK context.
 */
export * from './context';
export * from './declaration';
export * from './resolve';
export * from './rules';
export * from './teams';
export * from './types';
