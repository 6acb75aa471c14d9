/**
 * The message contract: its declaration (fields, rules, limits, types) and its validation. The
 * send function, the publisher client, the CLI and the schema generator import it from here.
 */
export * from './declaration';
export * from './validate';
export * from './send-at';
