/**
 * What the handler decides for each record, logged as the `decision` field of
 * one line. Operators filter on it; the local pipeline and its tests read it.
 * No imports: the local tools use it without loading the handler's dependencies.
 */
export const DECISIONS = ['sent', 'duplicate', 'dead-lettered', 'retry'] as const;
export type Decision = (typeof DECISIONS)[number];
