import { parseRecord, type QueueRecordLike } from '../../../../lambdas/send-email/parse';
import {
  InvalidMessageError,
  LIMITS,
  maskAddress,
  validateEmail,
  type ValidationIssue,
} from '../../../../lambdas/kernel/contract';
import { PermanentError } from '../../../../lambdas/kernel/errors';
import { SNS_MESSAGE_ID, TOPIC_ARN, addresses, body, envelope, envelopeBody, raw, validMessage } from '../../helpers';

/** Parses a record as the pipeline of {@link TOPIC_ARN} does. */
function parse(record: QueueRecordLike): ReturnType<typeof parseRecord> {
  return parseRecord(record, TOPIC_ARN);
}

/** Runs `fn`, which must throw an InvalidMessageError, and returns that error. */
function rejection(fn: () => unknown): InvalidMessageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return error as InvalidMessageError;
  }
  throw new Error('expected an InvalidMessageError, but nothing was thrown');
}

/** The issues reported for a message delivered in an SNS envelope. */
function issuesFor(message: unknown): readonly ValidationIssue[] {
  return rejection(() => parse(envelope(message))).issues;
}

/** Matches an issue for `field` whose reason contains `reason`. */
function issue(field: string, reason: string): ValidationIssue {
  return { field, reason: expect.stringContaining(reason) as unknown as string };
}

/** A valid message with one field replaced (undefined removes it). */
function withField(field: string, value: unknown): Record<string, unknown> {
  const message: Record<string, unknown> = { ...validMessage, [field]: value };
  if (value === undefined) delete message[field];
  return message;
}

/** The valid message in an envelope whose idempotency-key attribute is a Number with this Value. */
function numberKeyed(value: string): QueueRecordLike {
  return envelope(validMessage, {
    fields: { MessageAttributes: { 'idempotency-key': { Type: 'Number', Value: value } } },
  });
}

// ---------------------------------------------------------------- dedupe key

describe('parseRecord: the dedupe key', () => {
  test('the idempotency-key SNS message attribute wins over the envelope MessageId', () => {
    const parsed = parse(envelope(validMessage, { key: 'order-42-shipped' }));

    expect(parsed.key).toBe('order-42-shipped');
    expect(parsed.keySource).toBe('attribute');
    expect(parsed.snsMessageId).toBe(SNS_MESSAGE_ID);
  });

  test('without the attribute the envelope MessageId is the key', () => {
    const parsed = parse(envelope(validMessage));

    expect(parsed.key).toBe(SNS_MESSAGE_ID);
    expect(parsed.keySource).toBe('sns-message-id');
  });

  test.each([
    ['without', {}],
    ['with', { key: 'raw-key-1' }],
  ])('a raw (non-envelope) body %s an idempotency-key attribute is refused as NotAnEnvelope', (_, options) => {
    const error = rejection(() => parse(raw(validMessage, options)));

    expect(error.code).toBe('NotAnEnvelope');
    expect(error.failureClass).toBe('permanent');
    expect(error).toBeInstanceOf(PermanentError);
    expect(error.issues).toEqual([issue('body', "must be an SNS notification from the pipeline's topic")]);
  });

  test("an envelope from another topic is refused as ForeignTopic, naming the pipeline's topic", () => {
    const foreign = 'arn:aws:sns:eu-west-1:123456789012:someone-elses';
    const error = rejection(() => parse(envelope(validMessage, { topicArn: foreign, key: 'k-1' })));

    expect(error.code).toBe('ForeignTopic');
    expect(error.issues).toEqual([
      issue('envelope.TopicArn', `must be the pipeline's topic ${TOPIC_ARN}, got "${foreign}"`),
    ]);
  });

  test("an envelope from the pipeline's high-priority topic is the pipeline's too", () => {
    const high = 'arn:aws:sns:eu-west-1:123456789012:emails-high';
    const record = envelope(validMessage, { topicArn: high, key: 'k-high' });
    expect(parseRecord(record, { topicArn: TOPIC_ARN, highPriorityTopicArn: high }).key).toBe('k-high');
    // Without it configured, it is a foreign topic like any other.
    expect(rejection(() => parse(record)).code).toBe('ForeignTopic');
  });

  test("with a high-priority topic, another topic is refused naming both of the pipeline's", () => {
    const high = 'arn:aws:sns:eu-west-1:123456789012:emails-high';
    const foreign = 'arn:aws:sns:eu-west-1:123456789012:someone-elses';
    const error = rejection(() =>
      parseRecord(envelope(validMessage, { topicArn: foreign, key: 'k-1' }), {
        topicArn: TOPIC_ARN,
        highPriorityTopicArn: high,
      }),
    );
    expect(error.code).toBe('ForeignTopic');
    expect(error.issues).toEqual([
      issue('envelope.TopicArn', `must be the pipeline's topic ${TOPIC_ARN} or its high-priority topic ${high}`),
    ]);
  });

  test('an envelope without a TopicArn is refused as ForeignTopic', () => {
    const error = rejection(() => parse(envelope(validMessage, { fields: { TopicArn: undefined } })));

    expect(error.code).toBe('ForeignTopic');
    expect(error.issues).toEqual([issue('envelope.TopicArn', 'got null')]);
  });

  test('an empty idempotency-key attribute is rejected, not replaced by the MessageId', () => {
    const error = rejection(() => parse(envelope(validMessage, { key: '' })));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', 'must not be empty')]);
  });

  test('an idempotency-key with surrounding spaces is rejected', () => {
    const error = rejection(() => parse(envelope(validMessage, { key: ' key-1 ' })));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', 'start or end with spaces')]);
  });

  test(`an idempotency-key longer than ${LIMITS.maxKeyLength} characters is rejected`, () => {
    const error = rejection(() => parse(envelope(validMessage, { key: 'k'.repeat(LIMITS.maxKeyLength + 1) })));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', `at most ${LIMITS.maxKeyLength} characters`)]);
  });

  test(`an idempotency-key of exactly ${LIMITS.maxKeyLength} characters is accepted`, () => {
    const key = 'k'.repeat(LIMITS.maxKeyLength);

    expect(parse(envelope(validMessage, { key })).key).toBe(key);
  });

  test('an idempotency-key with a control character is rejected', () => {
    const error = rejection(() => parse(envelope(validMessage, { key: 'key\u0000one' })));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', 'control characters')]);
  });

  test('a Number idempotency-key attribute is the same key as a String one with the same value', () => {
    const asNumber = envelope(validMessage, {
      fields: { MessageAttributes: { 'idempotency-key': { Type: 'Number', Value: '4200001' } } },
    });

    expect(parse(asNumber).key).toBe('4200001');
    expect(parse(asNumber).key).toBe(parse(envelope(validMessage, { key: '4200001' })).key);
    expect(parse(asNumber).keySource).toBe('attribute');
  });

  test('a String idempotency-key is the same key however its accents are composed (Unicode NFC)', () => {
    const decomposed = parse(envelope(validMessage, { key: 'cafe\u0301-42' })).key;
    const composed = parse(envelope(validMessage, { key: 'caf\u00e9-42' })).key;

    expect(decomposed).toBe('caf\u00e9-42');
    expect(decomposed).toBe(composed);
  });

  test.each(['1e3', '1000', '1000.0', '+1000', '01000', '10E2', '1000e0'])(
    'a Number idempotency-key %s is the key 1000',
    (value) => {
      expect(parse(numberKeyed(value)).key).toBe('1000');
    },
  );

  test('Number idempotency-keys that differ in the 20th digit stay two keys (no float rounding)', () => {
    expect(parse(numberKeyed('12345678901234567890')).key).toBe('12345678901234567890');
    expect(parse(numberKeyed('12345678901234567891')).key).toBe('12345678901234567891');
  });

  test('a String idempotency-key that reads as a number stays as written (only Number keys are numbers)', () => {
    expect(parse(envelope(validMessage, { key: '1e3' })).key).toBe('1e3');
  });

  test.each([
    ['not a number', '12abc', 'must be a decimal number'],
    ['39 significant digits', '1'.repeat(39), 'at most 38 significant digits'],
    ['over 10^126', '1e127', 'between 10^-128 and 10^126'],
  ])('a Number idempotency-key that is %s is rejected as InvalidKey', (_, value, reason) => {
    const error = rejection(() => parse(numberKeyed(value)));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', reason)]);
  });

  test.each(['Binary', 'String.Array'])('an idempotency-key SNS attribute of Type %s is rejected', (type) => {
    const record = envelope(validMessage, {
      fields: { MessageAttributes: { 'idempotency-key': { Type: type, Value: '42' } } },
    });

    const error = rejection(() => parse(record));

    expect(error.code).toBe('InvalidKey');
    expect(error.issues).toEqual([issue('attribute idempotency-key', 'must be a String or Number message attribute')]);
  });

  test('envelope MessageAttributes that are not an object are rejected', () => {
    const error = rejection(() => parse(envelope(validMessage, { fields: { MessageAttributes: 'x' } })));

    expect(error.code).toBe('InvalidEnvelope');
    expect(error.issues).toEqual([issue('envelope.MessageAttributes', 'must be an object, got a string')]);
  });

  test('other SNS message attributes do not make a key', () => {
    const record = envelope(validMessage, {
      fields: { MessageAttributes: { tenant: { Type: 'String', Value: 'acme' } } },
    });

    expect(parse(record).key).toBe(SNS_MESSAGE_ID);
  });
});

describe('parseRecord: what an InvalidMessageError knows of its record', () => {
  test('an invalid message in an envelope carries the MessageId as its dedupe key', () => {
    const error = rejection(() => parse(envelope(withField('to', []))));

    expect(error.dedupeKey).toBe(SNS_MESSAGE_ID);
    expect(error.snsMessageId).toBe(SNS_MESSAGE_ID);
  });

  test('an invalid message with an idempotency-key attribute carries that key', () => {
    const error = rejection(() => parse(envelope(withField('to', []), { key: 'order-42' })));

    expect(error.dedupeKey).toBe('order-42');
    expect(error.snsMessageId).toBe(SNS_MESSAGE_ID);
  });

  test('an invalid idempotency-key carries the MessageId but no dedupe key', () => {
    const error = rejection(() => parse(envelope(validMessage, { key: ' bad ' })));

    expect(error.code).toBe('InvalidKey');
    expect(error.snsMessageId).toBe(SNS_MESSAGE_ID);
    expect(error.dedupeKey).toBeUndefined();
  });
});

// ---------------------------------------------------------------- the parsed email

describe('parseRecord: the parsed email', () => {
  test('normalises a valid message: a single address becomes a list, absent lists and tags are empty', () => {
    const parsed = parse(envelope({ to: 'ada@example.com', subject: 'Hi', text: 'Hello' }));

    expect(parsed.email).toStrictEqual({
      to: ['ada@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Hi',
      text: 'Hello',
      tags: {},
    });
  });

  test('keeps every field of a full message', () => {
    const message = {
      to: ['ada@example.com'],
      cc: ['bob@example.com'],
      bcc: ['audit@example.com'],
      replyTo: ['support@example.com'],
      subject: 'Grüße ✉️',
      text: 'Plain\r\n\tbody',
      html: '<p>HTML body</p>',
      tags: { campaign: 'spring-2024' },
    };

    expect(parse(envelope(message)).email).toStrictEqual(message);
  });

  test('accepts html alone with a subject', () => {
    const email = parse(envelope({ to: ['ada@example.com'], subject: 'Hi', html: '<b>Hello</b>' })).email;

    expect(email.html).toBe('<b>Hello</b>');
    expect(email.text).toBeUndefined();
  });

  test('accepts a template without data, with empty data', () => {
    const email = parse(envelope({ to: ['ada@example.com'], template: { name: 'welcome' } })).email;

    expect(email.template).toStrictEqual({ name: 'welcome', data: {} });
    expect(email.subject).toBeUndefined();
  });

  test('accepts a template with data', () => {
    const template = { name: 'order_shipped-v2', data: { order: 42, items: ['book'] } };

    expect(parse(envelope({ to: ['ada@example.com'], template })).email.template).toStrictEqual(template);
  });

  test('validateEmail accepts the same message without a record around it', () => {
    expect(validateEmail({ ...validMessage }).to).toEqual(['ada@example.com']);
  });
});

// ---------------------------------------------------------------- body and envelope

describe('parseRecord: body and envelope', () => {
  test('a body that is not JSON is rejected as InvalidJson on body', () => {
    const error = rejection(() => parse(body('{"Type": "Notification",')));

    expect(error.code).toBe('InvalidJson');
    expect(error.issues).toEqual([issue('body', 'is not valid JSON')]);
  });

  test.each([
    ['an array', '[1, 2]'],
    ['a string', '"hello"'],
    ['null', 'null'],
  ])('a JSON body that is %s, not an object, is rejected', (kind, text) => {
    const error = rejection(() => parse(body(text)));

    expect(error.code).toBe('InvalidJson');
    expect(error.issues).toEqual([issue('body', `must be a JSON object, got ${kind}`)]);
  });

  test('an envelope whose Type is not Notification is rejected', () => {
    const record = envelope(validMessage, { fields: { Type: 'SubscriptionConfirmation' } });

    const error = rejection(() => parse(record));

    expect(error.code).toBe('InvalidEnvelope');
    expect(error.issues).toEqual([issue('envelope.Type', 'must be "Notification", got "SubscriptionConfirmation"')]);
  });

  test('an envelope without a MessageId is rejected', () => {
    const error = rejection(() => parse(envelope(validMessage, { fields: { MessageId: undefined } })));

    expect(error.code).toBe('InvalidEnvelope');
    expect(error.issues).toEqual([issue('envelope.MessageId', 'is missing')]);
  });

  test('an envelope with a blank MessageId is rejected', () => {
    const error = rejection(() => parse(envelope(validMessage, { fields: { MessageId: '  ' } })));

    expect(error.issues).toEqual([issue('envelope.MessageId', 'is missing')]);
  });

  test.each([
    ['a control character', 'msg\u001b[2J-1', 'must not contain control characters'],
    ['surrounding spaces', ' 5f3c2b1a ', 'must not be empty or start or end with spaces'],
    [`more than ${LIMITS.maxKeyLength} characters`, 'm'.repeat(LIMITS.maxKeyLength + 1), 'at most 256 characters'],
  ])('an envelope MessageId with %s is rejected as InvalidKey on envelope.MessageId, like a key', (_, id, reason) => {
    const error = rejection(() => parse(envelope(validMessage, { fields: { MessageId: id } })));

    expect(error.code).toBe('InvalidKey');
    expect(error.failureClass).toBe('permanent');
    expect(error.issues).toEqual([issue('envelope.MessageId', reason)]);
  });

  test('an envelope MessageId is refused by the key rules even when an idempotency-key attribute is the key', () => {
    const error = rejection(() =>
      parse(envelope(validMessage, { key: 'order-42', fields: { MessageId: 'msg\u0000' } })),
    );

    expect(error.issues).toEqual([issue('envelope.MessageId', 'must not contain control characters')]);
  });

  test('an envelope whose Message is not a string is rejected', () => {
    const record = body(JSON.stringify({ ...envelopeBody(validMessage), Message: { ...validMessage } }));

    const error = rejection(() => parse(record));

    expect(error.code).toBe('InvalidEnvelope');
    expect(error.issues).toEqual([issue('envelope.Message', 'must be a string')]);
  });

  test('an envelope whose Message is not JSON is rejected as InvalidJson on envelope.Message', () => {
    const error = rejection(() => parse(envelope('to: ada@example.com')));

    expect(error.code).toBe('InvalidJson');
    expect(error.issues).toEqual([issue('envelope.Message', 'is not valid JSON')]);
  });

  test.each([
    ['an array', [validMessage]],
    ['a string', 'hello'],
    ['null', null],
  ])('a Message that is %s, not an object, is rejected', (kind, message) => {
    const error = rejection(() => parse(envelope(JSON.stringify(message))));

    expect(error.code).toBe('InvalidMessage');
    expect(error.issues).toEqual([issue('message', `must be a JSON object, got ${kind}`)]);
  });
});

// ---------------------------------------------------------------- hostile bodies fail at once

/** `{"k":{"k":...}}` with `levels` objects: as template data, the message nests levels + 2 deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i += 1) value = { k: value };
  return value;
}

/** A template message whose JSON text nests `levels` arrays inside template.data (2 bytes a level). */
function deepTemplateText(levels: number): string {
  return `{"to":["ada@example.com"],"template":{"name":"welcome","data":{"k":${'['.repeat(levels)}${']'.repeat(levels)}}}}`;
}

describe('parseRecord: hostile bodies fail at once', () => {
  test(`a message nested exactly LIMITS.maxDepth (${LIMITS.maxDepth}) levels deep, the message counting as one, is accepted`, () => {
    const message = { to: ['ada@example.com'], template: { name: 'welcome', data: nested(LIMITS.maxDepth - 2) } };

    expect(parse(envelope(message)).email.template?.name).toBe('welcome');
  });

  test('a message nested one level deeper is refused as InvalidMessage on template.data, naming the limit', () => {
    const message = { to: ['ada@example.com'], template: { name: 'welcome', data: nested(LIMITS.maxDepth - 1) } };

    const error = rejection(() => parse(envelope(message)));

    expect(error.code).toBe('InvalidMessage');
    expect(error.failureClass).toBe('permanent');
    expect(error.issues).toEqual([issue('template.data', `at most ${LIMITS.maxDepth} levels of objects and arrays`)]);
  });

  test("template data nested 100,000 levels deep (200 KB, under SNS's 256 KiB) is refused on template.data, not a stack overflow", () => {
    const error = rejection(() => parse(envelope(deepTemplateText(100_000), { key: 'deep-1' })));

    expect(error.code).toBe('InvalidMessage');
    expect(error.issues).toEqual([issue('template.data', 'is nested too deep')]);
    expect(error.dedupeKey).toBe('deep-1');
    expect(error.snsMessageId).toBe(SNS_MESSAGE_ID);
  });

  test('a field other than template.data nested too deep is reported on that field', () => {
    const error = rejection(() => parse(envelope({ ...validMessage, tags: nested(LIMITS.maxDepth) })));

    expect(error.issues).toEqual([issue('tags', 'is nested too deep')]);
  });

  test('a message that is nothing but nested arrays is reported on message', () => {
    const error = rejection(() => parse(envelope('['.repeat(50_000) + ']'.repeat(50_000))));

    expect(error.issues).toEqual([issue('message', 'is nested too deep')]);
  });

  test('a queue record body nested too deep is refused as InvalidJson on body, before it is parsed', () => {
    const text = `{"Type":"Notification","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const parseJson = jest.spyOn(JSON, 'parse');
    try {
      const error = rejection(() => parse(body(text)));

      expect(error.code).toBe('InvalidJson');
      expect(error.issues).toEqual([issue('body', `at most ${LIMITS.maxDepth} levels`)]);
      expect(parseJson.mock.calls.map(([parsed]) => parsed)).not.toContain(text);
    } finally {
      parseJson.mockRestore();
    }
  });

  test('an error no rule foresaw while reading a body is permanent (UnreadableBody on body), not retryable', () => {
    // Measuring the content is what fails here; whatever it is, the same body fails the same way on a retry.
    const measure = jest.spyOn(Buffer, 'byteLength').mockImplementation(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    try {
      const error = rejection(() => parse(envelope(validMessage)));

      expect(error.code).toBe('UnreadableBody');
      expect(error.failureClass).toBe('permanent');
      expect(error.issues).toEqual([issue('body', 'could not be read (RangeError: Maximum call stack size exceeded)')]);
    } finally {
      measure.mockRestore();
    }
  });

  test('validateEmail refuses template data that cannot be serialized (a BigInt) on template.data', () => {
    const error = rejection(() =>
      validateEmail({ to: ['ada@example.com'], template: { name: 'welcome', data: { total: 10n } } }),
    );

    expect(error.issues).toEqual([issue('template.data', 'cannot be serialized as JSON (TypeError)')]);
  });

  test('validateEmail refuses template data with a cycle as nested too deep, before measuring it', () => {
    const data: Record<string, unknown> = {};
    data.self = data;

    const error = rejection(() => validateEmail({ to: ['ada@example.com'], template: { name: 'welcome', data } }));

    expect(error.issues).toEqual([issue('template.data', 'is nested too deep')]);
  });
});

// ---------------------------------------------------------------- addresses as people write them (v1.1)

describe('validation: addresses with display names and international domains', () => {
  /** The `to` list after validation: what SES is given. */
  const sesForm = (...to: string[]) => parse(envelope({ ...validMessage, to })).email.to;

  test.each([
    ['a bare address', 'ada@example.com', 'ada@example.com'],
    ['Name <addr>', 'Ada Lovelace <ada@example.com>', 'Ada Lovelace <ada@example.com>'],
    ['spaces around the parts', '  Ada Lovelace   <ada@example.com> ', 'Ada Lovelace <ada@example.com>'],
    ['<addr> alone', '<ada@example.com>', 'ada@example.com'],
    ['a quoted name with a comma', '"Lovelace, Ada" <ada@example.com>', '"Lovelace, Ada" <ada@example.com>'],
    ['an unquoted name with a dot', 'Ada A. Lovelace <ada@example.com>', '"Ada A. Lovelace" <ada@example.com>'],
    [
      'an escaped quote in a quoted name',
      '"Ada \\"The Countess\\" L" <ada@example.com>',
      '"Ada \\"The Countess\\" L" <ada@example.com>',
    ],
    [
      'a non-ASCII name, RFC 2047-encoded',
      'José Müller <jose@example.com>',
      '=?UTF-8?B?Sm9zw6kgTcO8bGxlcg==?= <jose@example.com>',
    ],
    ['an IDN domain, to punycode', 'ada@bücher.example', 'ada@xn--bcher-kva.example'],
    ['a name and an IDN domain', 'Zoë <zoe@例え.jp>', '=?UTF-8?B?Wm/Dqw==?= <zoe@xn--r8jz45g.jp>'],
  ])('%s is accepted and given to SES as %p', (_, written, expected) => {
    expect(sesForm(written)).toEqual([expected]);
  });

  test('a long non-ASCII name is split into encoded-words of at most 75 characters', () => {
    const name = 'Ñ'.repeat(60);
    const [formatted = ''] = sesForm(`${name} <n@example.com>`);
    const words = formatted.replace(/ <n@example\.com>$/, '').split(' ');

    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    const decoded = words.map((w) => Buffer.from(w.slice('=?UTF-8?B?'.length, -2), 'base64').toString('utf8')).join('');
    expect(decoded).toBe(name);
  });

  test('cc, bcc and replyTo accept display names too', () => {
    const email = parse(
      envelope({
        ...validMessage,
        cc: ['Bob <bob@example.com>'],
        bcc: ['"Eve" <eve@example.com>'],
        replyTo: 'Help <help@example.com>',
      }),
    ).email;

    expect(email.cc).toEqual(['Bob <bob@example.com>']);
    expect(email.bcc).toEqual(['Eve <eve@example.com>']);
    expect(email.replyTo).toEqual(['Help <help@example.com>']);
  });

  test.each([
    ['a bad address inside the brackets', 'Ada <ada@>', 'must be an email address like name@example.com'],
    ['text after the brackets', 'Ada <ada@example.com> x', 'a display name followed by <address>'],
    ['two addresses', 'Ada <ada@example.com>, Bob <bob@example.com>', 'a display name followed by <address>'],
    ['an unbalanced quote', '"Ada <ada@example.com>', 'unbalanced quotes'],
    ['a quote inside an unquoted name', 'Ada "A" L <ada@example.com>', 'outside quotes'],
    ['a bidi override in the name', 'Ada\u202e <ada@example.com>', 'invisible or text-direction characters'],
    ['a control character in the name', 'Ada\u001b <ada@example.com>', 'control characters'],
    ['CR/LF in the name', 'Ada\r\nBcc: eve@evil.example <ada@example.com>', 'header injection'],
    ['a name over the limit', `${'a'.repeat(129)} <ada@example.com>`, 'longer than 128 characters'],
    ['an IDN domain that does not convert', 'ada@bü cher.example', 'has an invalid domain'],
  ])('%s is rejected', (_, written, reason) => {
    expect(issuesFor(withField('to', [written]))).toEqual([issue('to[0]', reason)]);
  });

  test('the reason never repeats the address', () => {
    const [found] = issuesFor(withField('to', ['Ada Secret <ada.secret@>']));
    expect(found?.reason).not.toContain('secret');
  });
});

// ---------------------------------------------------------------- the contract, one field at a time

describe('validation: recipients', () => {
  test('an unknown top-level field is rejected by name', () => {
    expect(issuesFor(withField('sender', 'ceo@example.com'))).toEqual([issue('sender', 'is not a known field')]);
  });

  test('to missing is rejected', () => {
    expect(issuesFor(withField('to', undefined))).toEqual([issue('to', 'is required')]);
  });

  test('to as an empty list is rejected', () => {
    expect(issuesFor(withField('to', []))).toEqual([issue('to', 'must name at least one recipient')]);
  });

  test('to of the wrong type is rejected', () => {
    expect(issuesFor(withField('to', 42))).toEqual([
      issue('to', 'must be an email address or a list of them, got a number'),
    ]);
  });

  test('a recipient that is not a string is rejected at its index', () => {
    expect(issuesFor(withField('to', ['ada@example.com', { address: 'bob@example.com' }]))).toEqual([
      issue('to[1]', 'must be a string'),
    ]);
  });

  test('an invalid address is rejected at its index', () => {
    expect(issuesFor(withField('to', ['ada@example.com', 'not-an-address']))).toEqual([
      issue('to[1]', 'must be an email address like name@example.com'),
    ]);
  });

  test('an address without a dotted domain is rejected', () => {
    expect(issuesFor(withField('to', ['ada@localhost']))).toEqual([issue('to[0]', 'has an invalid domain')]);
  });

  test('a single address string with a bad address is reported on the field itself', () => {
    expect(issuesFor(withField('to', 'ada@'))).toEqual([issue('to', 'must be an email address')]);
  });

  test(`more than ${LIMITS.maxRecipients} recipients across to, cc and bcc are rejected`, () => {
    const message = { ...validMessage, to: addresses(30, 'to'), cc: addresses(15, 'cc'), bcc: addresses(6, 'bcc') };

    expect(issuesFor(message)).toEqual([
      issue('to', `to, cc and bcc together must have at most ${LIMITS.maxRecipients} recipients, got 51`),
    ]);
  });

  test(`exactly ${LIMITS.maxRecipients} recipients across to, cc and bcc are accepted`, () => {
    const message = { ...validMessage, to: addresses(30, 'to'), cc: addresses(15, 'cc'), bcc: addresses(5, 'bcc') };

    expect(parse(envelope(message)).email.bcc).toHaveLength(5);
  });

  test('CR/LF in an address is rejected as header injection', () => {
    expect(issuesFor(withField('cc', ['ada@example.com\r\nBcc: eve@evil.example']))).toEqual([
      issue('cc[0]', 'must not contain CR or LF (header injection)'),
    ]);
  });

  test('a non-ASCII local part is rejected: SES takes only ASCII before the @', () => {
    expect(issuesFor(withField('to', ['jösé@example.com']))).toEqual([issue('to[0]', 'has a non-ASCII local part')]);
  });

  test(`an address longer than ${LIMITS.maxAddressLength} characters is rejected`, () => {
    const long = `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(10)}.com`;

    expect(long.length).toBeGreaterThan(LIMITS.maxAddressLength);
    expect(issuesFor(withField('to', [long]))).toEqual([
      issue('to[0]', `must be at most ${LIMITS.maxAddressLength} characters`),
    ]);
  });

  test(`more than ${LIMITS.maxReplyTo} replyTo addresses are rejected`, () => {
    expect(issuesFor(withField('replyTo', addresses(LIMITS.maxReplyTo + 1, 'reply')))).toEqual([
      issue('replyTo', `must have at most ${LIMITS.maxReplyTo} addresses`),
    ]);
  });

  test('an invalid replyTo address is rejected', () => {
    expect(issuesFor(withField('replyTo', ['support@@example.com']))).toEqual([
      issue('replyTo[0]', 'has an invalid local part'),
    ]);
  });
});

describe('validation: subject', () => {
  test('CR/LF in the subject is rejected as header injection', () => {
    expect(issuesFor(withField('subject', 'Hello\r\nBcc: eve@evil.example'))).toEqual([
      issue('subject', 'must not contain CR or LF (header injection)'),
    ]);
  });

  test('a bare LF in the subject is rejected as header injection', () => {
    expect(issuesFor(withField('subject', 'Hello\nX-Spam: no'))).toEqual([
      issue('subject', 'must not contain CR or LF (header injection)'),
    ]);
  });

  test('a control character in the subject is rejected', () => {
    expect(issuesFor(withField('subject', 'Ding\u0007dong'))).toEqual([
      issue('subject', 'must not contain control characters'),
    ]);
  });

  test('a bidi override (U+202E) in the subject is rejected', () => {
    expect(issuesFor(withField('subject', 'Invoice \u202Efdp.exe'))).toEqual([
      issue('subject', 'must not contain invisible or text-direction characters'),
    ]);
  });

  test('a lone surrogate in the subject is rejected', () => {
    expect(issuesFor(withField('subject', 'broken \ud83d'))).toEqual([issue('subject', 'lone surrogate')]);
  });

  test('a blank subject is rejected', () => {
    expect(issuesFor(withField('subject', '   '))).toEqual([issue('subject', 'must not be empty')]);
  });

  test(`a subject longer than ${LIMITS.maxSubjectLength} characters is rejected`, () => {
    expect(issuesFor(withField('subject', 's'.repeat(LIMITS.maxSubjectLength + 1)))).toEqual([
      issue('subject', `must be at most ${LIMITS.maxSubjectLength} characters`),
    ]);
  });

  test('a subject that is not a string is rejected', () => {
    expect(issuesFor(withField('subject', 7))).toEqual([issue('subject', 'must be a string, got a number')]);
  });

  test('a missing subject is rejected when the content is text', () => {
    expect(issuesFor(withField('subject', undefined))).toEqual([issue('subject', 'is required')]);
  });

  test('a subject together with a template is rejected', () => {
    const message = { to: ['ada@example.com'], subject: 'Hi', template: { name: 'welcome', data: {} } };

    expect(issuesFor(message)).toEqual([issue('subject', 'must not be set with a template')]);
  });
});

describe('validation: content', () => {
  test('a lone surrogate in the text is rejected', () => {
    expect(issuesFor(withField('text', 'half an emoji: \ud83d'))).toEqual([issue('text', 'lone surrogate')]);
  });

  test('a control character in the html is rejected', () => {
    expect(issuesFor({ ...validMessage, html: '<p>\u0000</p>' })).toEqual([
      issue('html', 'contains control characters'),
    ]);
  });

  test('a blank text is rejected', () => {
    expect(issuesFor(withField('text', ' \n '))).toEqual([issue('text', 'must not be empty')]);
  });

  test('text and a template together are rejected', () => {
    const message = { to: ['ada@example.com'], text: 'Hello', template: { name: 'welcome', data: {} } };

    expect(issuesFor(message)).toContainEqual(issue('template', 'cannot be combined with text or html'));
  });

  test('a message with neither text, html nor a template is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], subject: 'Hi' })).toEqual([
      issue('text', 'content is required: give text and/or html, or a template'),
    ]);
  });

  test('a template without a name is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], template: { data: { a: 1 } } })).toEqual([
      issue('template.name', 'is required'),
    ]);
  });

  test('a template name with characters SES does not allow is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], template: { name: 'welcome email!' } })).toEqual([
      issue('template.name', `must be 1 to ${LIMITS.maxTemplateNameLength} letters, digits, _ or -`),
    ]);
  });

  test(`a template name longer than ${LIMITS.maxTemplateNameLength} characters is rejected`, () => {
    const name = 't'.repeat(LIMITS.maxTemplateNameLength + 1);

    expect(issuesFor({ to: ['ada@example.com'], template: { name } })).toEqual([
      issue('template.name', `must be 1 to ${LIMITS.maxTemplateNameLength}`),
    ]);
  });

  test('template data that is not an object is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], template: { name: 'welcome', data: ['a'] } })).toEqual([
      issue('template.data', 'must be an object, got an array'),
    ]);
  });

  test('an unknown field inside the template is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], template: { name: 'welcome', arn: 'x' } })).toEqual([
      issue('template.arn', 'is not a known field'),
    ]);
  });

  test('a template that is not an object is rejected', () => {
    expect(issuesFor({ to: ['ada@example.com'], template: 'welcome' })).toEqual([
      issue('template', 'must be an object { name, data }, got a string'),
    ]);
  });

  test(`content over LIMITS.maxContentBytes (${LIMITS.maxContentBytes}) is rejected`, () => {
    const text = 'a'.repeat(LIMITS.maxContentBytes);

    expect(issuesFor(withField('text', text))).toEqual([issue('text', `over the limit of ${LIMITS.maxContentBytes}`)]);
  });

  test('content of exactly LIMITS.maxContentBytes, subject included, is accepted', () => {
    const subject = 'Hi';
    const text = 'a'.repeat(LIMITS.maxContentBytes - subject.length);

    expect(parse(envelope({ to: ['ada@example.com'], subject, text })).email.text).toHaveLength(text.length);
  });

  test('content size counts UTF-8 bytes, not characters', () => {
    // Half the limit in characters, but two bytes each.
    const text = 'é'.repeat(LIMITS.maxContentBytes / 2);

    expect(issuesFor(withField('text', text))).toEqual([issue('text', `over the limit of ${LIMITS.maxContentBytes}`)]);
  });

  test('template data over LIMITS.maxContentBytes is rejected on template.data', () => {
    const data = { blob: 'x'.repeat(LIMITS.maxContentBytes) };

    expect(issuesFor({ to: ['ada@example.com'], template: { name: 'welcome', data } })).toEqual([
      issue('template.data', `over the limit of ${LIMITS.maxContentBytes}`),
    ]);
  });
});

describe('validation: tags', () => {
  test('a tag name with characters SES does not allow is rejected', () => {
    expect(issuesFor(withField('tags', { 'bad name': 'x' }))).toEqual([
      issue('tags.bad name', `name must be 1 to ${LIMITS.maxTagLength} letters, digits, _ or -`),
    ]);
  });

  test('a tag value with characters SES does not allow is rejected', () => {
    expect(issuesFor(withField('tags', { campaign: 'spring sale!' }))).toEqual([
      issue('tags.campaign', `value must be a string of 1 to ${LIMITS.maxTagLength} letters, digits, _ or -`),
    ]);
  });

  test('a tag value that is not a string is rejected', () => {
    expect(issuesFor(withField('tags', { campaign: 2024 }))).toEqual([
      issue('tags.campaign', 'value must be a string'),
    ]);
  });

  test('a tag name with the reserved dedupe prefix is rejected', () => {
    expect(issuesFor(withField('tags', { 'dedupe-key': 'forged' }))).toEqual([
      issue('tags.dedupe-key', 'reserved for the pipeline'),
    ]);
  });

  test(`more than ${LIMITS.maxTags} tags are rejected`, () => {
    const tags = Object.fromEntries(Array.from({ length: LIMITS.maxTags + 1 }, (_, i) => [`t${i}`, 'v']));

    expect(issuesFor(withField('tags', tags))).toEqual([issue('tags', `must have at most ${LIMITS.maxTags} entries`)]);
  });

  // Known bug (message.ts readTags): `out[name] = tagValue` on a plain object turns a tag named
  // "__proto__" into a prototype assignment, so the tag vanishes while the message is accepted.
  test('a tag named __proto__ is rejected or kept, never silently dropped', () => {
    const message = '{"to":["ada@example.com"],"subject":"Hi","text":"Hello","tags":{"__proto__":"x","ok":"y"}}';

    let tags: Readonly<Record<string, string>> | undefined;
    try {
      tags = parse(envelope(message)).email.tags;
    } catch (error) {
      expect((error as InvalidMessageError).issues).toContainEqual(issue('tags.__proto__', ''));
      return;
    }
    expect(Object.getOwnPropertyDescriptor(tags, '__proto__')?.value).toBe('x');
  });

  test('tags that are not an object are rejected', () => {
    expect(issuesFor(withField('tags', ['campaign']))).toEqual([
      issue('tags', 'must be an object of name -> value, got an array'),
    ]);
  });
});

describe('validation: every fault at once', () => {
  test('an InvalidMessageError lists all bad fields, each with its reason', () => {
    const message = {
      to: ['not-an-address'],
      subject: 'Hi\r\nBcc: eve@evil.example',
      text: 'Hello',
      priority: 'high',
      tags: { dedupe: 'x' },
    };

    const error = rejection(() => parse(envelope(message)));

    expect(error.code).toBe('InvalidMessage');
    expect(error.issues).toHaveLength(4);
    expect(error.issues).toEqual(
      expect.arrayContaining([
        issue('priority', 'is not a known field'),
        issue('to[0]', 'must be an email address'),
        issue('subject', 'header injection'),
        issue('tags.dedupe', 'reserved'),
      ]),
    );
  });

  test('the error message names every field with its reason', () => {
    const error = rejection(() => validateEmail({ to: [], subject: '\u202E', text: 'x', cc: 5 }));

    expect(error.message).toContain('to: must name at least one recipient');
    expect(error.message).toContain('cc: must be an email address or a list of them, got a number');
    expect(error.message).toContain('subject: must not contain invisible or text-direction characters');
  });
});

// ---------------------------------------------------------------- helpers and limits

describe('maskAddress', () => {
  test.each([
    ['Ada Lovelace <ada@example.com>', 'a***@example.com'],
    ['"Lovelace, Ada" <ada@example.com>', 'a***@example.com'],
    ['=?UTF-8?B?Sm9zw6k=?= <jose@example.com>', 'j***@example.com'],
    ['Ada <>', '***'],
  ])('masks %p without its display name as %p', (written, masked) => {
    expect(maskAddress(written)).toBe(masked);
  });

  test('keeps the first character and the domain', () => {
    expect(maskAddress('ada.lovelace@example.com')).toBe('a***@example.com');
  });

  test('hides a value without an @ completely', () => {
    expect(maskAddress('ada.lovelace')).toBe('***');
  });

  test('hides a value that starts with @ completely', () => {
    expect(maskAddress('@example.com')).toBe('***');
  });
});

describe('LIMITS', () => {
  test('allow the 50 recipients SES accepts per message', () => {
    expect(LIMITS.maxRecipients).toBe(50);
  });

  test('keep content below the 256 KiB SNS and SQS message cap', () => {
    expect(LIMITS.maxContentBytes).toBeLessThan(256 * 1024);
  });
});

// ---------------------------------------------------------------- teams

describe('parseRecord: the team is the topic', () => {
  const BILLING = 'arn:aws:sns:eu-west-1:123456789012:billing';
  const SECURITY = 'arn:aws:sns:eu-west-1:123456789012:security';
  const SECURITY_HIGH = 'arn:aws:sns:eu-west-1:123456789012:security-high';
  const topics = {
    topicArn: TOPIC_ARN,
    teams: {
      billing: { topicArn: BILLING, senders: ['billing@example.com', 'invoices@example.com'] },
      security: { topicArn: SECURITY, highPriorityTopicArn: SECURITY_HIGH, senders: ['security@example.com'] },
    },
  };
  const parseWithTeams = (record: QueueRecordLike) => parseRecord(record, topics);

  test.each([
    [BILLING, 'billing'],
    [SECURITY, 'security'],
    [SECURITY_HIGH, 'security'],
  ])('an envelope from %s belongs to team %s', (topicArn, team) => {
    expect(parseWithTeams(envelope(validMessage, { topicArn, key: 'order-42' })).team).toBe(team);
  });

  test("the pipeline's own topic is still accepted, and its records have no team (the implicit team)", () => {
    const parsed = parseWithTeams(envelope(validMessage, { key: 'order-42' }));
    expect(parsed).not.toHaveProperty('team');
    expect(parsed.key).toBe('order-42');
  });

  test('without teams, no record has a team', () => {
    expect(parse(envelope(validMessage))).not.toHaveProperty('team');
  });

  test("a topic that is neither the pipeline's nor a team's is refused as ForeignTopic, never sent", () => {
    const error = rejection(() =>
      parseWithTeams(envelope(validMessage, { topicArn: 'arn:aws:sns:eu-west-1:123456789012:billing-x' })),
    );
    expect(error.code).toBe('ForeignTopic');
    expect(error.issues[0]?.field).toBe('envelope.TopicArn');
    expect(error.issues[0]?.reason).toContain("teams' topics");
  });

  test("a team's topic is refused by a pipeline that does not know the team", () => {
    expect(rejection(() => parse(envelope(validMessage, { topicArn: BILLING }))).code).toBe('ForeignTopic');
  });

  test('nothing a publisher writes chooses another team: attributes, envelope fields and the body are not read for it', () => {
    const record = envelope(validMessage, {
      topicArn: BILLING,
      fields: {
        MessageAttributes: {
          'idempotency-key': { Type: 'String', Value: 'order-42' },
          team: { Type: 'String', Value: 'security' },
        },
        Team: 'security',
        Subject: 'security',
      },
    });
    const parsed = parseWithTeams(record);
    expect(parsed.team).toBe('billing');

    // A body naming a team is not a message of the contract: refused, not routed.
    const claimed = rejection(() =>
      parseWithTeams(envelope({ ...validMessage, team: 'security' }, { topicArn: BILLING })),
    );
    expect(claimed.issues.some((i) => i.field === 'team')).toBe(true);
  });

  test('the same key from two teams is two dedupe keys, each in its team’s namespace; the SNS MessageId too', () => {
    const fromBilling = parseWithTeams(envelope(validMessage, { topicArn: BILLING, key: 'order-42' }));
    const fromSecurity = parseWithTeams(envelope(validMessage, { topicArn: SECURITY_HIGH, key: 'order-42' }));
    expect([fromBilling.key, fromSecurity.key]).toEqual(['billing#order-42', 'security#order-42']);
    expect(parseWithTeams(envelope(validMessage, { topicArn: BILLING })).key).toBe(`billing#${SNS_MESSAGE_ID}`);
  });

  test('without teams, and on the pipeline’s own topics, keys stay bare', () => {
    expect(parse(envelope(validMessage, { key: 'billing#order-42' })).key).toBe('billing#order-42');
    expect(parseWithTeams(envelope(validMessage, { key: 'other#order-42' })).key).toBe('other#order-42');
  });

  test('a bare key that would enter a team’s namespace is refused on the pipeline’s own topics', () => {
    const error = rejection(() => parseWithTeams(envelope(validMessage, { key: 'billing#order-42' })));
    expect(error.code).toBe('InvalidKey');
    expect(error.issues[0]?.field).toBe('attribute idempotency-key');
    expect(error.issues[0]?.reason).toContain("team billing's key namespace");
  });

  describe('attachments under the team’s prefix', () => {
    const file = (s3Key: string) => ({ filename: 'f.pdf', contentType: 'application/pdf', s3Key });
    const withFiles = (...keys: string[]) => ({ ...validMessage, attachments: keys.map(file) });

    test('a team’s s3Key under its own prefix is taken', () => {
      const parsed = parseWithTeams(envelope(withFiles('billing/invoice-42.pdf'), { topicArn: BILLING }));
      expect(parsed.email.attachments?.map((a) => ('s3Key' in a ? a.s3Key : undefined))).toEqual([
        'billing/invoice-42.pdf',
      ]);
    });

    test('an s3Key outside the team’s prefix is refused, naming each attachments[i].s3Key', () => {
      const error = rejection(() =>
        parseWithTeams(
          envelope(withFiles('billing/ok.pdf', 'security/secret.pdf', 'billingx/near.pdf'), { topicArn: BILLING }),
        ),
      );
      expect(error.code).toBe('InvalidMessage');
      expect(error.issues).toEqual([
        issue('attachments[1].s3Key', 'must start with "billing/"'),
        issue('attachments[2].s3Key', 'must start with "billing/"'),
      ]);
    });

    test('the pipeline’s own topics may not name a team’s prefix; without teams any key is taken', () => {
      const error = rejection(() => parseWithTeams(envelope(withFiles('security/secret.pdf'))));
      expect(error.issues).toEqual([issue('attachments[0].s3Key', "team security's prefix")]);
      expect(parseWithTeams(envelope(withFiles('reports/q1.pdf'))).email.attachments).toHaveLength(1);
      expect(parse(envelope(withFiles('security/secret.pdf'))).email.attachments).toHaveLength(1);
    });
  });

  describe('from (contract v1.3)', () => {
    const withSenders = { ...topics, senderAddress: 'noreply@example.com' };
    const parseFrom = (message: object, topicArn?: string) =>
      parseRecord(envelope(message, topicArn !== undefined ? { topicArn } : {}), withSenders);

    test("a team's message may name any of its senders, whatever the case, and gets it as configured", () => {
      expect(parseFrom({ ...validMessage, from: 'Invoices@Example.com' }, BILLING).email.from).toBe(
        'invoices@example.com',
      );
    });

    test("without from, a team's message gets its default sender, the first", () => {
      expect(parseFrom(validMessage, BILLING).email.from).toBe('billing@example.com');
      expect(parseFrom(validMessage, SECURITY_HIGH).email.from).toBe('security@example.com');
    });

    test("another team's sender is refused at once, naming from", () => {
      const error = rejection(() => parseFrom({ ...validMessage, from: 'security@example.com' }, BILLING));
      expect(error.code).toBe('InvalidMessage');
      expect(error.issues).toEqual([issue('from', "must be one of team billing's senders")]);
      expect(error).toBeInstanceOf(PermanentError);
    });

    test("the pipeline's own topics: only senderAddress, and no from stays no from", () => {
      expect(parseFrom({ ...validMessage, from: 'noreply@example.com' }).email.from).toBe('noreply@example.com');
      expect(parseFrom(validMessage).email).not.toHaveProperty('from');
      const error = rejection(() => parseFrom({ ...validMessage, from: 'billing@example.com' }));
      expect(error.issues).toEqual([issue('from', "must be one of the pipeline's senderAddress")]);
    });

    test('a from that is no bare address is refused by the contract, naming from', () => {
      expect(issuesFor({ ...validMessage, from: 'Ada <ada@example.com>' })).toEqual([
        issue('from', 'must be a bare email address'),
      ]);
    });
  });
});
