/**
 * Pure parsing of one queue record: the SNS envelope, the topic check and the
 * dedupe key; the message inside is validated against the contract (message.ts).
 * No I/O, no clients.
 */
import {
  checkIdempotencyKey,
  describe,
  fail,
  IDEMPOTENCY_KEY_ATTRIBUTE,
  InvalidMessageError,
  isObject,
  validateEmail,
  type EmailMessage,
} from './message';

/** What a queue record means once parsed. */
export interface ParsedRecord {
  /** The dedupe key: the publisher's idempotency key, else the SNS MessageId. */
  readonly key: string;
  /** Where the key came from, for logs. */
  readonly keySource: 'attribute' | 'sns-message-id';
  /** The SNS MessageId of the envelope. */
  readonly snsMessageId: string;
  readonly email: EmailMessage;
}

/** The parts of an SQS record this module reads (a subset of aws-lambda's SQSRecord). */
export interface QueueRecordLike {
  readonly body: string;
  readonly messageAttributes?: Readonly<Record<string, { readonly stringValue?: string | undefined } | undefined>>;
}

/** Runs `body`, and tags an InvalidMessageError it throws with the key and MessageId. */
function tagged<T>(known: { key?: string; snsMessageId: string }, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof InvalidMessageError) {
      error.snsMessageId = known.snsMessageId;
      if (known.key !== undefined) error.dedupeKey = known.key;
    }
    throw error;
  }
}

type Json = Record<string, unknown>;

interface Envelope {
  readonly messageId: string;
  readonly message: string;
  readonly attributeKey?: string;
}

/** True when a parsed body looks like an SNS notification rather than a raw message. */
function looksLikeEnvelope(body: Json): boolean {
  return body.Type === 'Notification' || ('TopicArn' in body && 'Message' in body);
}

/** SNS message attribute types a key may have; the key is the Value either way. */
const KEY_TYPES: ReadonlySet<unknown> = new Set(['String', 'Number']);

function readEnvelope(body: Json, topicArn: string): Envelope {
  if (body.Type !== 'Notification') {
    fail('InvalidEnvelope', 'envelope.Type', `must be "Notification", got ${JSON.stringify(body.Type)}`);
  }
  if (body.TopicArn !== topicArn) {
    fail(
      'ForeignTopic',
      'envelope.TopicArn',
      `must be the pipeline's topic ${topicArn}, got ${JSON.stringify(body.TopicArn ?? null)}: only its messages are sent`,
    );
  }
  if (typeof body.MessageId !== 'string' || body.MessageId.trim() === '') {
    fail('InvalidEnvelope', 'envelope.MessageId', 'is missing: the SNS envelope has no MessageId');
  }
  if (typeof body.Message !== 'string') {
    fail('InvalidEnvelope', 'envelope.Message', `must be a string, got ${describe(body.Message)}`);
  }
  let attributeKey: string | undefined;
  const attributes = body.MessageAttributes;
  if (attributes !== undefined) {
    if (!isObject(attributes)) {
      fail('InvalidEnvelope', 'envelope.MessageAttributes', `must be an object, got ${describe(attributes)}`);
    }
    const attribute = attributes[IDEMPOTENCY_KEY_ATTRIBUTE];
    if (attribute !== undefined) {
      if (!isObject(attribute) || !KEY_TYPES.has(attribute.Type) || typeof attribute.Value !== 'string') {
        fail('InvalidKey', `attribute ${IDEMPOTENCY_KEY_ATTRIBUTE}`, 'must be a String or Number message attribute');
      }
      attributeKey = attribute.Value;
    }
  }
  return { messageId: body.MessageId, message: body.Message, ...(attributeKey !== undefined ? { attributeKey } : {}) };
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    fail('InvalidJson', field, `is not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Parses one queue record. Only an SNS envelope from `topicArn` (the pipeline's
 * own topic) is trusted: a raw body or another topic's envelope put straight on
 * the queue is refused, never sent. The dedupe key is the `idempotency-key`
 * attribute (String or Number), else the SNS MessageId.
 */
export function parseRecord(record: QueueRecordLike, topicArn: string): ParsedRecord {
  const body = parseJson(record.body, 'body');
  if (!isObject(body)) {
    fail('InvalidJson', 'body', `must be a JSON object, got ${describe(body)}`);
  }
  if (!looksLikeEnvelope(body)) {
    // Put straight on the queue (or raw delivery turned on): nothing says the topic's publishers sent it.
    fail(
      'NotAnEnvelope',
      'body',
      "must be an SNS notification from the pipeline's topic: publish to the topic, not to the queue",
    );
  }
  const envelope = readEnvelope(body, topicArn);
  const snsMessageId = envelope.messageId;
  if (envelope.attributeKey !== undefined) {
    const key = tagged({ snsMessageId }, () => checkIdempotencyKey(envelope.attributeKey ?? ''));
    const email = tagged({ key, snsMessageId }, () => validateEmail(parseJson(envelope.message, 'envelope.Message')));
    return { key, keySource: 'attribute', snsMessageId, email };
  }
  const email = tagged({ key: snsMessageId, snsMessageId }, () =>
    validateEmail(parseJson(envelope.message, 'envelope.Message')),
  );
  return { key: snsMessageId, keySource: 'sns-message-id', snsMessageId, email };
}
