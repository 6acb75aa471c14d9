/**
 * The order in which the ledger records one batch: records of different keys at once, the
 * records of one key one after another, its `Send` events first and the rest by event time.
 *
 * SES reports a send and its outcome within a second or two, so one batch often holds both. Run
 * side by side, the outcome would find its `Send` not yet recorded and take the long way (read
 * the claim, then write: ledger.ts), and the two writes would race on the item. Recorded after
 * it, the outcome is one conditional write on the bound attempt.
 */

export interface Ordered {
  /** The record's message id (unique in a batch). */
  readonly id: string;
  /** The dedupe key; undefined for a record that names none (it waits for nothing). */
  readonly key?: string;
  /** Recorded before the key's other records (a `Send`). */
  readonly first: boolean;
  /** The event's time (ISO 8601): the order among the rest. */
  readonly at: string;
}

export interface BatchOrder {
  /** Resolves when the records before this one, of its key, have been handled (however they ended). */
  turn(id: string): Promise<void>;
  /** Marks the record handled: the next of its key may go. Call it once, in a `finally`. */
  done(id: string): void;
}

function before(a: Ordered, b: Ordered): number {
  if (a.first !== b.first) return a.first ? -1 : 1;
  return a.at < b.at ? -1 : a.at > b.at ? 1 : 0;
}

/** The order of a batch's records, from what each one's event says. */
export function batchOrder(records: readonly Ordered[]): BatchOrder {
  const handled = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const previous = new Map<string, string>();
  const byKey = new Map<string, Ordered[]>();
  for (const record of records) {
    let resolve = () => {};
    const promise = new Promise<void>((settle) => (resolve = settle));
    handled.set(record.id, { promise, resolve });
    if (record.key === undefined) continue;
    byKey.set(record.key, [...(byKey.get(record.key) ?? []), record]);
  }
  for (const group of byKey.values()) {
    const sorted = [...group].sort(before);
    sorted.slice(1).forEach((record, i) => previous.set(record.id, sorted[i].id));
  }
  return {
    turn: async (id) => {
      const prior = previous.get(id);
      if (prior !== undefined) await handled.get(prior)?.promise;
    },
    done: (id) => handled.get(id)?.resolve(),
  };
}
