/**
 * The unit suite's helpers, so that each test states only what it is about.
 *
 * Builders for queue records: the shapes follow what SQS hands the function for
 * an SNS subscription with raw message delivery off (the envelope), and for a
 * message put straight on the queue (raw). And the CLI run in this process, its
 * lines captured.
 */
import type { QueueRecordLike } from '../../lambdas/send-email/parse';
import { snsEnvelope } from '../../tools/dev/local/records';

export const SNS_MESSAGE_ID = '5f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190';

/** The pipeline's own topic: the one the handler trusts. */
export const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:emails';

/** A message that meets the contract; spread it and override one field. */
export const validMessage = {
  to: ['ada@example.com'],
  subject: 'Your order has shipped',
  text: 'Order 42 is on its way.',
} as const;

export interface EnvelopeOptions {
  /** Sets the SNS message attribute `idempotency-key` (a String). */
  readonly key?: string;
  /** @default {@link TOPIC_ARN} */
  readonly topicArn?: string;
  /** Replaces or removes (undefined) fields of the envelope itself. */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** The SNS notification envelope around a message, as the SQS body. */
export function envelopeBody(message: unknown, options: EnvelopeOptions = {}): Record<string, unknown> {
  return {
    // The envelope carries the message as a JSON string; a string passes through unchanged.
    ...snsEnvelope(message, {
      messageId: SNS_MESSAGE_ID,
      topicArn: options.topicArn ?? TOPIC_ARN,
      ...(options.key !== undefined ? { key: options.key } : {}),
    }),
    SignatureVersion: '1',
    Signature: 'c2lnbmF0dXJl',
    SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/cert.pem',
    UnsubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe',
    ...options.fields,
  };
}

/** An SQS record whose body is the SNS envelope around `message`. */
export function envelope(message: unknown, options: EnvelopeOptions = {}): QueueRecordLike {
  return { body: JSON.stringify(envelopeBody(message, options)), messageAttributes: {} };
}

/** An SQS record whose body is the message itself, with an optional SQS `idempotency-key` attribute. */
export function raw(message: unknown, options: { readonly key?: string } = {}): QueueRecordLike {
  return {
    body: JSON.stringify(message),
    messageAttributes: options.key !== undefined ? { 'idempotency-key': { stringValue: options.key } } : {},
  };
}

/** An SQS record with a body given verbatim. */
export function body(text: string): QueueRecordLike {
  return { body: text, messageAttributes: {} };
}

/** `count` distinct valid addresses. */
export function addresses(count: number, prefix = 'user'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}@example.com`);
}

/** Every order of `items` (n! of them). */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Output lines captured: `io` is what the CLI writes to, `out` and `err` what it wrote. */
export function capture(): {
  io: { out: (l: string) => void; err: (l: string) => void };
  out: string[];
  err: string[];
} {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

/** The CLI run in this process with `args`: its exit code and what it printed. */
export async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // Loaded on first use, so that the tests of queue records do not load the CLI.
  const { run } = await import('../../lib/cli/main');
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
