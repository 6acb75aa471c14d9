/**
 * The parse stage: pure parsing of one queue record, the SNS envelope, the topic check and
 * the dedupe key; the message inside is validated against the contract (kernel/contract).
 * With teams, the topic gives the record its team, and the team its key namespace, its From
 * addresses and its attachments' prefix (kernel/teams.ts).
 * No I/O, no clients. Whatever a body holds, the outcome is the parsed record or
 * an InvalidMessageError (permanent): a body that cannot be read now cannot be
 * read on a retry either.
 */
import { textTooDeep, type TooDeep } from '../kernel/contract/json-depth';
import {
  checkIdempotencyKey,
  CONTRACT,
  describe,
  fail,
  IDEMPOTENCY_KEY_ATTRIBUTE,
  InvalidMessageError,
  isObject,
  tooDeepIssue,
  validateEmail,
  type EmailMessage,
  type KeyType,
} from '../kernel/contract';
import { namespaceTaken, teamKey, teamOfTopic, type TeamRoutes } from '../kernel/teams';

/** What a queue record means once parsed. */
export interface ParsedRecord {
  /** The dedupe key: the publisher's idempotency key, else the SNS MessageId. */
  readonly key: string;
  /** Where the key came from, for logs. */
  readonly keySource: 'attribute' | 'sns-message-id';
  /** The SNS MessageId of the envelope. */
  readonly snsMessageId: string;
  /**
   * The team whose topic the envelope came through; none: the pipeline's own topics (the one
   * implicit team). Known from the envelope's TopicArn only, never from the message.
   */
  readonly team?: string;
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
  readonly team?: string;
  readonly message: string;
  readonly attributeKey?: { readonly value: string; readonly type: KeyType };
}

/** True when a parsed body looks like an SNS notification rather than a raw message. */
function looksLikeEnvelope(body: Json): boolean {
  return body.Type === 'Notification' || ('TopicArn' in body && 'Message' in body);
}

/** SNS message attribute types a key may have. */
const KEY_TYPES: ReadonlySet<unknown> = new Set(CONTRACT.idempotencyKey.types);

/** The pipeline's topics: its topic, the high-priority topic when it has one, and its teams' topics. */
export type PipelineTopics =
  | string
  | {
      readonly topicArn: string;
      readonly highPriorityTopicArn?: string;
      readonly teams?: TeamRoutes;
      /** The implicit team's one sender: what a message of the pipeline's own topics may name as `from`. */
      readonly senderAddress?: string;
    };

function readEnvelope(body: Json, topics: PipelineTopics): Envelope {
  if (body.Type !== 'Notification') {
    fail('InvalidEnvelope', 'envelope.Type', `must be "Notification", got ${JSON.stringify(body.Type)}`);
  }
  const { topicArn, highPriorityTopicArn, teams } = typeof topics === 'string' ? { topicArn: topics } : topics;
  // The team is the topic's: the topic policies decide who publishes there; nothing in the message does.
  const team = teamOfTopic(teams, body.TopicArn);
  const pipelines =
    body.TopicArn === topicArn || (highPriorityTopicArn !== undefined && body.TopicArn === highPriorityTopicArn);
  if (!pipelines && team === undefined) {
    const also = highPriorityTopicArn !== undefined ? ` or its high-priority topic ${highPriorityTopicArn}` : '';
    const teamTopics = teams !== undefined ? " or one of its teams' topics" : '';
    fail(
      'ForeignTopic',
      'envelope.TopicArn',
      `must be the pipeline's topic ${topicArn}${also}${teamTopics}, got ${JSON.stringify(body.TopicArn ?? null)}: only their messages are sent`,
    );
  }
  if (typeof body.MessageId !== 'string' || body.MessageId.trim() === '') {
    fail('InvalidEnvelope', 'envelope.MessageId', 'is missing: the SNS envelope has no MessageId');
  }
  if (typeof body.Message !== 'string') {
    fail('InvalidEnvelope', 'envelope.Message', `must be a string, got ${describe(body.Message)}`);
  }
  let attributeKey: Envelope['attributeKey'];
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
      attributeKey = { value: attribute.Value, type: attribute.Type as KeyType };
    }
  }
  return {
    messageId: body.MessageId,
    message: body.Message,
    ...(team !== undefined ? { team } : {}),
    ...(attributeKey !== undefined ? { attributeKey } : {}),
  };
}

/**
 * Parses JSON text whose nesting was checked first (json-depth.ts): nothing downstream
 * (validation, JSON.stringify, Powertools' payload hash) meets more than the contract's depth.
 */
function parseJson(text: string, field: string, tooDeep: (found: TooDeep) => never): unknown {
  const found = textTooDeep(text, CONTRACT.maxDepth);
  if (found) tooDeep(found);
  try {
    return JSON.parse(text);
  } catch (error) {
    fail('InvalidJson', field, `is not valid JSON (${(error as Error).message})`);
  }
}

/** The body of the queue record: an SNS envelope nests 3 levels, so the contract's depth is plenty. */
function parseBody(text: string): unknown {
  return parseJson(text, 'body', () =>
    fail('InvalidJson', 'body', `is nested too deep: at most ${CONTRACT.maxDepth} levels of objects and arrays`),
  );
}

/** The message inside the envelope, reported on the field that nests too deep (`template.data`, ...). */
function parseMessage(text: string): unknown {
  return parseJson(text, 'envelope.Message', (found) => {
    throw new InvalidMessageError('InvalidMessage', [tooDeepIssue(found)]);
  });
}

/**
 * Parses one queue record. Only an SNS envelope from `topics` (the pipeline's
 * own topic, its high-priority topic, or a team's topic, which gives the record its team) is trusted: a raw body or another
 * topic's envelope put straight on the queue is refused, never sent. Which lane
 * a record takes is its queue's, not its topic's: each queue's policy admits
 * only its own topic. The dedupe key is the `idempotency-key` attribute
 * (String or Number), else the SNS MessageId.
 */
export function parseRecord(record: QueueRecordLike, topics: PipelineTopics): ParsedRecord {
  try {
    return readRecord(record, topics);
  } catch (error) {
    if (error instanceof InvalidMessageError) throw error;
    // No rule foresaw it, yet it comes from the body alone (this is pure): a retry reads the same body.
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidMessageError('UnreadableBody', [
      { field: 'body', reason: `could not be read (${name}: ${message})` },
    ]);
  }
}

/**
 * The dedupe key of `key`: a team's is `<team>#<key>` (kernel/teams.ts), the implicit team's is
 * bare, and a bare one may not enter a configured team's namespace (InvalidKey).
 */
function namespaced(
  key: string,
  team: string | undefined,
  teams: TeamRoutes | undefined,
  snsMessageId: string,
): string {
  if (team !== undefined) return teamKey(team, key);
  const taken = namespaceTaken(teams, key);
  if (taken !== undefined) {
    tagged({ key, snsMessageId }, () =>
      fail(
        'InvalidKey',
        `attribute ${IDEMPOTENCY_KEY_ATTRIBUTE}`,
        `must not start with "${taken}#" on the pipeline's own topics: that is team ${taken}'s key namespace (publish to its topic)`,
      ),
    );
  }
  return key;
}

/**
 * The email with its From address settled (contract v1.3): a team's message may name one of its
 * team's senders as `from` and gets the team's default (the first) without one; a message of the
 * pipeline's own topics may name only the pipeline's senderAddress, and keeps its `from` absent
 * without one (its hash as before v1.3). Anything else is permanent, naming `from`.
 */
function withSender(email: EmailMessage, team: string | undefined, topics: PipelineTopics): EmailMessage {
  const routes = typeof topics === 'string' ? undefined : topics.teams;
  const own = typeof topics === 'string' ? undefined : topics.senderAddress;
  const senders = team !== undefined ? (routes?.[team]?.senders ?? []) : own !== undefined ? [own] : [];
  if (email.from === undefined)
    return team !== undefined && senders[0] !== undefined ? { ...email, from: senders[0] } : email;
  const asked = email.from.toLowerCase();
  const match = senders.find((sender) => sender.toLowerCase() === asked);
  if (match === undefined) {
    const whose = team !== undefined ? `team ${team}'s senders` : "the pipeline's senderAddress";
    throw new InvalidMessageError('InvalidMessage', [
      {
        field: 'from',
        reason: `must be one of ${whose} (${senders.join(', ') || 'none known'}), got ${JSON.stringify(email.from)}`,
      },
    ]);
  }
  return { ...email, from: match };
}

/**
 * Attachments under the team's prefix: with teams, a team's `s3Key` must start with `<team>/`,
 * and one of the pipeline's own topics may not start with a configured team's (it would send that
 * team's files). Permanent, naming `attachments[i].s3Key`; without teams, nothing is checked.
 */
function checkAttachmentPrefixes(email: EmailMessage, team: string | undefined, teams: TeamRoutes | undefined): void {
  if (teams === undefined) return;
  const issues = (email.attachments ?? []).flatMap((attachment, i) => {
    if (!('s3Key' in attachment)) return [];
    const field = `attachments[${i}].s3Key`;
    if (team !== undefined) {
      return attachment.s3Key.startsWith(`${team}/`)
        ? []
        : [{ field, reason: `must start with "${team}/": team ${team}'s files are under its own prefix` }];
    }
    const slash = attachment.s3Key.indexOf('/');
    const owner = slash > 0 ? attachment.s3Key.slice(0, slash) : undefined;
    return owner !== undefined && Object.hasOwn(teams, owner)
      ? [
          {
            field,
            reason: `must not start with "${owner}/" on the pipeline's own topics: that is team ${owner}'s prefix`,
          },
        ]
      : [];
  });
  if (issues.length > 0) throw new InvalidMessageError('InvalidMessage', issues);
}

function readRecord(record: QueueRecordLike, topics: PipelineTopics): ParsedRecord {
  const body = parseBody(record.body);
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
  const envelope = readEnvelope(body, topics);
  const { attributeKey } = envelope;
  const team = envelope.team !== undefined ? { team: envelope.team } : {};
  // The MessageId is written into DLQ attributes and logs whether or not it is the key: the key's rules hold for it.
  const snsMessageId = checkIdempotencyKey(envelope.messageId, 'String', 'envelope.MessageId');
  const given =
    attributeKey !== undefined
      ? tagged({ snsMessageId }, () => checkIdempotencyKey(attributeKey.value, attributeKey.type))
      : snsMessageId;
  const key = namespaced(given, envelope.team, typeof topics === 'string' ? undefined : topics.teams, snsMessageId);
  const email = tagged({ key, snsMessageId }, () => {
    const valid = validateEmail(parseMessage(envelope.message));
    checkAttachmentPrefixes(valid, envelope.team, typeof topics === 'string' ? undefined : topics.teams);
    return withSender(valid, envelope.team, topics);
  });
  const keySource = attributeKey !== undefined ? 'attribute' : 'sns-message-id';
  return { key, keySource, snsMessageId, ...team, email };
}
