/**
 * The account of a chaos run, from what it left behind: the SES mailbox, the DLQ, the
 * consumers' decision lines and the faults the harness injected. Pure: no I/O.
 *
 * - lost: a unit with neither an email nor a DLQ entry;
 * - the ambiguous window: an email whose SES MessageId no consumer logged as `sent` with its
 *   completion written, i.e. SES accepted it and the pipeline never recorded the send. Each must have an injected cause on
 *   its key: a crash after SES accepted, a pod killed with the send in flight, a failed
 *   completion write, or an SES reset/5xx;
 * - duplicates: emails beyond the first for one dedupe key, each attributed to one ambiguous
 *   event. Two sends both recorded as completed, or a duplicate no injected fault explains,
 *   is a bug: it goes to `problems` with the key and its log lines.
 */
import type { MailboxEmail } from '../../tools/dev/local/emulators';
import type { DecisionEvent } from '../../tools/dev/local/pipeline';

/** How a unit must end. `either`: of units sharing a key, one is sent and the others dead-lettered. */
export type Expect = 'email' | 'dead-letter' | 'either';

/** One logical message. */
export interface Unit {
  /** `chaos-<n>`: in the recipient's address and in the body of every copy. */
  readonly id: string;
  readonly recipient: string;
  readonly expect: Expect;
  /** The dedupe key: the publisher's idempotency key, else the SNS MessageId (none for a raw body). */
  key?: string;
}

export type AmbiguousCause = 'crash-after-accept' | 'killed-in-flight' | 'completion-write-failed' | 'ses-ambiguous';

/** A crash injected after SES accepted a send (the pod never heard back). */
export interface Crash {
  readonly recipient: string;
  readonly pod: string;
  readonly sesMessageId: string | undefined;
}

/** A pod that was SIGKILLed, with the recipients of every SendEmail its SES proxy forwarded. */
export interface KilledPod {
  readonly name: string;
  readonly forwarded: readonly string[];
}

export interface DeadLetter {
  readonly Body?: string;
  readonly MessageAttributes?: Record<string, { StringValue?: string }>;
}

export interface DuplicateRecord {
  readonly key: string;
  readonly recipient: string;
  /** The ambiguous event it is attributed to, or `UNEXPLAINED` (a bug). */
  readonly cause: AmbiguousCause | 'UNEXPLAINED';
  readonly pod?: string;
  /** The first consumer lines that mention the key. */
  readonly lines: readonly string[];
}

export interface AccountInput {
  readonly units: readonly Unit[];
  readonly emails: readonly MailboxEmail[];
  readonly letters: readonly DeadLetter[];
  readonly decisions: readonly DecisionEvent[];
  readonly crashes: readonly Crash[];
  readonly killed: readonly KilledPod[];
  /** Consumer lines that mention a key or id, for problem reports. */
  readonly linesAbout: (needle: string, max?: number) => string[];
}

export interface Account {
  readonly emailsSent: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly deadLettered: Readonly<Record<string, number>>;
  /** DLQ entries that were not dead-lettered on their first receive, by reason. */
  readonly deadLetteredAfterRetries: Readonly<Record<string, number>>;
  /** SES acceptances the pipeline never recorded as sent, by injected cause. */
  readonly ambiguousEvents: Readonly<Partial<Record<AmbiguousCause, number>>>;
  readonly duplicateLog: readonly DuplicateRecord[];
  /** Anything that breaks the pass criteria. Empty on a pass. */
  readonly problems: readonly string[];
}

const TOKEN = /chaos-\d+/;

/**
 * A `sent` line for an email SES accepted whose completion was never written to the store
 * (the handler marks it completionWritten: false); its claim expires with the invocation.
 */
export function completionUnwritten(d: DecisionEvent): boolean {
  return d.decision === 'sent' && d.completionWritten === false;
}

/** A `sent` line whose claim was completed: the send is on record under its SES MessageId. */
function recordedSend(d: DecisionEvent): d is DecisionEvent & { sesMessageId: string } {
  return d.decision === 'sent' && typeof d.sesMessageId === 'string' && !completionUnwritten(d);
}

function bump<K extends string>(counts: Partial<Record<K, number>>, name: K): void {
  counts[name] = (counts[name] ?? 0) + 1;
}

function indented(lines: readonly string[]): string {
  return lines.map((line) => `    ${line}`).join('\n');
}

interface Cause {
  readonly cause: AmbiguousCause;
  readonly pod: string;
  readonly sesMessageId?: string;
}

/** Every injected event on one key that can leave an email SES accepted but nobody recorded. */
function causesFor(key: string, recipients: ReadonlySet<string>, input: AccountInput): Cause[] {
  const causes: Cause[] = [];
  const crashes = input.crashes.filter((c) => recipients.has(c.recipient));
  for (const crash of crashes) {
    causes.push({
      cause: 'crash-after-accept',
      pod: crash.pod,
      ...(crash.sesMessageId ? { sesMessageId: crash.sesMessageId } : {}),
    });
  }
  const onKey = input.decisions.filter((d) => d.dedupeKey === key);
  for (const pod of input.killed) {
    // Sends the pod made for this key that ended in neither a decision of its own nor an injected crash.
    const decided = onKey.filter(
      (d) => d.consumer === pod.name && (d.decision === 'sent' || d.errorClass === 'ambiguous'),
    ).length;
    const crashed = crashes.filter((c) => c.pod === pod.name).length;
    const inFlight = pod.forwarded.filter((r) => recipients.has(r)).length - crashed - decided;
    for (let i = 0; i < inFlight; i += 1) causes.push({ cause: 'killed-in-flight', pod: pod.name });
  }
  for (const d of onKey) {
    if (completionUnwritten(d)) causes.push({ cause: 'completion-write-failed', pod: d.consumer });
    if (d.decision === 'retry' && d.errorClass === 'ambiguous')
      causes.push({ cause: 'ses-ambiguous', pod: d.consumer });
  }
  return causes;
}

/** Gives each unrecorded email a cause: the crash that captured its SES MessageId, else any other. */
function attribute(unrecorded: readonly MailboxEmail[], causes: Cause[]): (Cause | undefined)[] {
  const take = (match: (c: Cause) => boolean): Cause | undefined => {
    const index = causes.findIndex(match);
    return index >= 0 ? causes.splice(index, 1)[0] : undefined;
  };
  const exact = unrecorded.map((m) => take((c) => c.sesMessageId === m.messageId));
  return exact.map((cause) => cause ?? take((c) => c.sesMessageId === undefined));
}

export function account(input: AccountInput): Account {
  const { units, emails, letters, decisions } = input;
  const problems: string[] = [];
  const unitById = new Map(units.map((u) => [u.id, u]));
  const unitByRecipient = new Map(units.map((u) => [u.recipient, u]));

  const emailsOf = new Map<string, MailboxEmail[]>();
  for (const e of emails) {
    const unit = unitByRecipient.get(e.destination.to[0] ?? '');
    if (!unit) problems.push(`an email to ${e.destination.to.join(',')} that no unit published`);
    else emailsOf.set(unit.id, [...(emailsOf.get(unit.id) ?? []), e]);
  }

  const lettersOf = new Map<string, number>();
  const deadLettered: Record<string, number> = {};
  const deadLetteredAfterRetries: Record<string, number> = {};
  for (const letter of letters) {
    const attribute = (name: string) => letter.MessageAttributes?.[name]?.StringValue ?? '';
    const code = attribute('error-code') || '(no code)';
    bump(deadLettered, code);
    if (attribute('receive-count') !== '1') bump(deadLetteredAfterRetries, code);
    const id = TOKEN.exec(letter.Body ?? '')?.[0];
    const unit = id ? unitById.get(id) : undefined;
    if (!attribute('error-code') || !attribute('error-reason')) {
      problems.push(`a DLQ entry without a reason (${unit?.id ?? 'unknown unit'}): code=${attribute('error-code')}`);
    }
    if (!unit) problems.push(`a DLQ entry that no unit published: ${(letter.Body ?? '').slice(0, 200)}`);
    else lettersOf.set(unit.id, (lettersOf.get(unit.id) ?? 0) + 1);
  }

  let lost = 0;
  for (const u of units) {
    const sent = emailsOf.get(u.id)?.length ?? 0;
    const dead = lettersOf.get(u.id) ?? 0;
    const about = `${u.id} (key ${u.key ?? 'none'}, to ${u.recipient})`;
    const log = () => indented(input.linesAbout(u.key ?? u.id));
    if (sent + dead === 0) {
      lost += 1;
      problems.push(`LOST ${about}: no email and no DLQ entry. Log lines:\n${log()}`);
    }
    if (u.expect === 'email' && dead > 0) problems.push(`good message dead-lettered: ${about}. Log lines:\n${log()}`);
    if (u.expect === 'dead-letter' && sent > 0) problems.push(`bad message sent: ${about}`);
    if (dead > 1 || (dead > 0 && sent > 0)) problems.push(`${about} ended as ${sent} email(s) and ${dead} DLQ entries`);
  }

  // Per dedupe key (units without one stand alone).
  const groups = new Map<string, Unit[]>();
  for (const u of units) groups.set(u.key ?? u.id, [...(groups.get(u.key ?? u.id) ?? []), u]);
  const recorded = new Set(decisions.filter(recordedSend).map((d) => d.sesMessageId));
  const ambiguousEvents: Partial<Record<AmbiguousCause, number>> = {};
  const duplicateLog: DuplicateRecord[] = [];
  let duplicates = 0;
  for (const [key, group] of groups) {
    const recipients = new Set(group.map((u) => u.recipient));
    const mails = group.flatMap((u) => emailsOf.get(u.id) ?? []);
    const unrecorded = mails.filter((m) => !recorded.has(m.messageId));
    if (mails.length - unrecorded.length > 1) {
      problems.push(
        `DUPLICATE OUTSIDE THE AMBIGUOUS WINDOW: key ${key} was recorded as sent ${mails.length - unrecorded.length} times. ` +
          `Log lines:\n${indented(input.linesAbout(key))}`,
      );
    }
    const attributed = attribute(unrecorded, causesFor(key, recipients, input));
    for (const cause of attributed) if (cause) bump(ambiguousEvents, cause.cause);
    // The duplicates are unrecorded emails: all of them when one send was recorded, else all but one.
    const extra = Math.max(0, mails.length - 1);
    duplicates += extra;
    const recipient = [...recipients].join(',');
    for (const cause of attributed
      .slice(attributed.length - extra)
      .concat(new Array(Math.max(0, extra - attributed.length)))) {
      duplicateLog.push({
        key,
        recipient,
        cause: cause?.cause ?? 'UNEXPLAINED',
        ...(cause ? { pod: cause.pod } : {}),
        lines: input.linesAbout(key, 6),
      });
      if (!cause) {
        problems.push(
          `UNEXPLAINED DUPLICATE: key ${key} (${recipient}): ${mails.length} emails and no injected fault explains the extra one. ` +
            `Log lines:\n${indented(input.linesAbout(key))}`,
        );
      }
    }
  }

  const ambiguous = Object.values(ambiguousEvents).reduce((a, b) => a + b, 0);
  if (duplicates > ambiguous) problems.push(`${duplicates} duplicates but only ${ambiguous} ambiguous events`);
  return {
    emailsSent: emails.length,
    duplicates,
    lost,
    deadLettered,
    deadLetteredAfterRetries,
    ambiguousEvents,
    duplicateLog,
    problems,
  };
}
