import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  CONTEXT_PREFIX,
  DEFAULTS,
  LOG_RETENTION_DAYS,
  SettingsError,
  resolveSettings,
  settingsFromContext,
  type PipelineSettings,
} from '../../../../lib/settings';
import { SETTINGS } from '../../../../lib/settings';

const DAY = 86_400;
const base = { senderAddress: 'noreply@example.com', sesIdentity: 'example.com' } as const;

/** Runs `fn`, which must throw a SettingsError, and returns it. */
function settingsError(fn: () => unknown): SettingsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return error as SettingsError;
  }
  throw new Error('expected a SettingsError, but nothing was thrown');
}

function rejected(overrides: Partial<PipelineSettings>): SettingsError {
  return settingsError(() => resolveSettings({ ...base, ...overrides }));
}

// ---------------------------------------------------------------- defaults

describe('resolveSettings: defaults', () => {
  test('applies every documented default', () => {
    expect(resolveSettings(base)).toStrictEqual({
      senderAddress: 'noreply@example.com',
      sesIdentity: 'example.com',
      retentionPeriodSeconds: 4 * DAY,
      dedupeWindowSeconds: 21 * DAY,
      allowShortDedupeWindow: false,
      functionTimeoutSeconds: 30,
      memorySizeMb: 512,
      visibilityTimeoutSeconds: 180,
      batchSize: 10,
      maxBatchingWindowSeconds: 1,
      maxConcurrency: 10,
      maxReceiveCount: 5,
      idempotencyKeyPrefix: 'email-pipeline',
      failOpen: false,
      logLevel: 'INFO',
      metricsNamespace: 'EmailPipeline',
      logRetentionDays: 30,
      sendConfirmationGraceSeconds: 300,
      retryBudgetSeconds: DAY,
      maxScheduleAheadSeconds: DAY,
      maxSendRate: 14,
      highPriorityRateShare: 20,
      retryingTooLongSeconds: 900,
      sesTimeoutMs: 5000,
      statusReservedConcurrency: 5,
      retryBaseSeconds: 2,
      systemicRetrySeconds: 300,
      retryCapSeconds: 300,
      callbackRetryBaseSeconds: 30,
      callbackRetryWindowSeconds: DAY,
    });
  });

  test('the SES timeout defaults to 5000 ms, or half of a shorter function timeout; a value given is checked', () => {
    expect(resolveSettings(base).sesTimeoutMs).toBe(5000);
    expect(resolveSettings({ ...base, functionTimeoutSeconds: 2 }).sesTimeoutMs).toBe(1000);
    expect(() => resolveSettings({ ...base, functionTimeoutSeconds: 2, sesTimeoutMs: 5000 })).toThrow(
      'Invalid setting sesTimeoutMs=5000: must be a whole number from 100 to half the function timeout (1000 ms)',
    );
  });

  test('the default dedupe window covers retention, retry budget, DLQ retention and the schedule horizon plus one day, so a late redrive is still deduplicated', () => {
    expect(resolveSettings({ ...base, retentionPeriodSeconds: 2 * DAY }).dedupeWindowSeconds).toBe(19 * DAY);
    expect(resolveSettings({ ...base, retentionPeriodSeconds: 14 * DAY }).dedupeWindowSeconds).toBe(31 * DAY);
    expect(
      resolveSettings({ ...base, retentionPeriodSeconds: 14 * DAY, retryBudgetSeconds: 3 * DAY }).dedupeWindowSeconds,
    ).toBe(33 * DAY);
    expect(
      resolveSettings({ ...base, retentionPeriodSeconds: 14 * DAY, maxScheduleAheadSeconds: 7 * DAY })
        .dedupeWindowSeconds,
    ).toBe(37 * DAY);
  });

  test('the default visibility timeout is 6 x the function timeout', () => {
    expect(resolveSettings({ ...base, functionTimeoutSeconds: 45 }).visibilityTimeoutSeconds).toBe(270);
  });

  test('keeps explicit values', () => {
    const settings = resolveSettings({
      ...base,
      configurationSetName: 'email-events',
      dedupeWindowSeconds: 20 * DAY,
      visibilityTimeoutSeconds: 600,
      maxReceiveCount: 8,
      failOpen: true,
      logLevel: 'DEBUG',
    });

    expect(settings).toMatchObject({
      configurationSetName: 'email-events',
      dedupeWindowSeconds: 20 * DAY,
      visibilityTimeoutSeconds: 600,
      maxReceiveCount: 8,
      failOpen: true,
      logLevel: 'DEBUG',
    });
  });

  test('has no configuration set unless one is given', () => {
    expect(resolveSettings(base)).not.toHaveProperty('configurationSetName');
  });
});

// ---------------------------------------------------------------- the design's invariants

describe('resolveSettings: invariants', () => {
  test('a dedupe window shorter than retention + retry budget + DLQ retention is refused, naming them', () => {
    const error = rejected({ retentionPeriodSeconds: 4 * DAY, dedupeWindowSeconds: 20 * DAY - 1 });

    expect(error.setting).toBe('dedupeWindowSeconds');
    expect(error.value).toBe(20 * DAY - 1);
    expect(error.message).toContain(`dedupeWindowSeconds=${20 * DAY - 1}`);
    expect(error.message).toContain(
      `must be at least the queue retention plus the retry budget plus the DLQ retention plus the schedule horizon (${4 * DAY} + ${DAY} + ${14 * DAY} + maxScheduleAheadSeconds=${DAY} = ${20 * DAY})`,
    );
    expect(error.message).toContain('allowShortDedupeWindow=true');
  });

  test('a dedupe window equal to the queue retention is refused: a copy can still come back from the DLQ', () => {
    expect(rejected({ dedupeWindowSeconds: 4 * DAY }).setting).toBe('dedupeWindowSeconds');
  });

  test('a dedupe window of exactly retention + retry budget + DLQ retention + schedule horizon is accepted', () => {
    expect(resolveSettings({ ...base, dedupeWindowSeconds: 20 * DAY }).dedupeWindowSeconds).toBe(20 * DAY);
  });

  test('the dedupe window must cover the schedule horizon: a scheduled copy starts its retry path that much later', () => {
    const error = rejected({ maxScheduleAheadSeconds: 7 * DAY, dedupeWindowSeconds: 20 * DAY });

    expect(error.setting).toBe('dedupeWindowSeconds');
    expect(error.message).toContain(`maxScheduleAheadSeconds=${7 * DAY} = ${26 * DAY}`);
    expect(resolveSettings({ ...base, maxScheduleAheadSeconds: 0, dedupeWindowSeconds: 19 * DAY })).toMatchObject({
      dedupeWindowSeconds: 19 * DAY,
      maxScheduleAheadSeconds: 0,
    });
  });

  test('maxScheduleAheadSeconds is a whole number from 0 to 7 days', () => {
    expect(rejected({ maxScheduleAheadSeconds: -1 }).setting).toBe('maxScheduleAheadSeconds');
    expect(rejected({ maxScheduleAheadSeconds: 7 * DAY + 1 }).message).toContain('from 0 to 604800');
    expect(rejected({ maxScheduleAheadSeconds: 1.5 }).setting).toBe('maxScheduleAheadSeconds');
  });

  test('allowShortDedupeWindow accepts a window that covers only the retention period and the retry budget, on purpose', () => {
    const settings = resolveSettings({ ...base, dedupeWindowSeconds: 6 * DAY, allowShortDedupeWindow: true });

    expect(settings).toMatchObject({ dedupeWindowSeconds: 6 * DAY, allowShortDedupeWindow: true });
  });

  test('even with allowShortDedupeWindow, a window shorter than the retention period plus the retry budget is refused', () => {
    const error = rejected({ dedupeWindowSeconds: 6 * DAY - 1, allowShortDedupeWindow: true });

    expect(error.setting).toBe('dedupeWindowSeconds');
    expect(error.message).toContain(
      `must be at least the queue retention period plus the retry budget plus the schedule horizon (retentionPeriodSeconds=${4 * DAY} + retryBudgetSeconds=${DAY} + maxScheduleAheadSeconds=${DAY})`,
    );
  });

  test('a retention period that cannot hold the retry path is refused, naming both values', () => {
    const error = rejected({ retentionPeriodSeconds: 60 });

    expect(error.setting).toBe('retentionPeriodSeconds');
    expect(error.message).toContain('retentionPeriodSeconds=60');
    expect(error.message).toContain('retention must hold the whole retry path');
    expect(error.message).toContain('maxReceiveCount=5');
    expect(error.message).toContain('visibilityTimeoutSeconds=180');
  });

  test('the retention rule follows maxReceiveCount and the visibility timeout', () => {
    // 900 s delay + 5 x max(visibility, 900 s)
    expect(resolveSettings({ ...base, retentionPeriodSeconds: 5400 }).retentionPeriodSeconds).toBe(5400);
    expect(rejected({ retentionPeriodSeconds: 5399 }).setting).toBe('retentionPeriodSeconds');
    expect(rejected({ retentionPeriodSeconds: 5400, visibilityTimeoutSeconds: 1200 }).message).toContain(
      'visibilityTimeoutSeconds=1200',
    );
    expect(rejected({ retentionPeriodSeconds: 5400, maxReceiveCount: 6 }).message).toContain('maxReceiveCount=6');
  });

  test('a longer retention without a longer dedupe window is refused', () => {
    const error = rejected({ retentionPeriodSeconds: 14 * DAY, dedupeWindowSeconds: 5 * DAY });

    expect(error.setting).toBe('dedupeWindowSeconds');
  });

  test('a visibility timeout under 6 x the function timeout is refused', () => {
    const error = rejected({ functionTimeoutSeconds: 30, visibilityTimeoutSeconds: 179 });

    expect(error.setting).toBe('visibilityTimeoutSeconds');
    expect(error.value).toBe(179);
    expect(error.message).toContain('visibilityTimeoutSeconds=179');
    expect(error.message).toContain('must be at least 6 x functionTimeoutSeconds (180)');
  });

  test('a visibility timeout of exactly 6 x the function timeout is accepted', () => {
    expect(resolveSettings({ ...base, functionTimeoutSeconds: 30, visibilityTimeoutSeconds: 180 })).toMatchObject({
      visibilityTimeoutSeconds: 180,
    });
  });

  test(`maxReceiveCount below ${DEFAULTS.maxReceiveCount} is refused`, () => {
    const error = rejected({ maxReceiveCount: 4 });

    expect(error.setting).toBe('maxReceiveCount');
    expect(error.message).toContain('maxReceiveCount=4');
    expect(error.message).toContain('must be at least 5');
  });

  test('the error message has the form "Invalid setting name=value: rule"', () => {
    expect(rejected({ maxReceiveCount: 2 }).message).toMatch(
      /^Invalid setting maxReceiveCount=2: must be at least 5, /,
    );
  });
});

// ---------------------------------------------------------------- sender and identity

describe('resolveSettings: sender and identity', () => {
  test('a sender on the identity domain is accepted, whatever the case', () => {
    expect(resolveSettings({ senderAddress: 'NoReply@Example.COM', sesIdentity: 'example.com' }).senderAddress).toBe(
      'NoReply@Example.COM',
    );
  });

  test('a sender equal to an email address identity is accepted', () => {
    expect(() =>
      resolveSettings({ senderAddress: 'noreply@example.com', sesIdentity: 'noreply@example.com' }),
    ).not.toThrow();
  });

  test('a sender on another domain is refused', () => {
    const error = settingsError(() =>
      resolveSettings({ senderAddress: 'noreply@example.org', sesIdentity: 'example.com' }),
    );

    expect(error.setting).toBe('senderAddress');
    expect(error.message).toContain('noreply@example.org');
    expect(error.message).toContain('must belong to the SES identity example.com');
  });

  test('a sender on a domain that only ends with the identity is refused', () => {
    const error = settingsError(() =>
      resolveSettings({ senderAddress: 'noreply@notexample.com', sesIdentity: 'example.com' }),
    );

    expect(error.setting).toBe('senderAddress');
  });

  test('a sender other than an email address identity is refused', () => {
    const error = settingsError(() =>
      resolveSettings({ senderAddress: 'sales@example.com', sesIdentity: 'noreply@example.com' }),
    );

    expect(error.message).toContain('must belong to the SES identity noreply@example.com');
  });

  test('a sender with a display name is refused, pointing to senderName', () => {
    const error = rejected({ senderAddress: 'Example <noreply@example.com>' });

    expect(error.setting).toBe('senderAddress');
    expect(error.message).toContain('must be a bare address without a display name (set senderName');
  });

  test.each([
    ['NUL', 'no\u0000reply@example.com', 'control characters'],
    ['ESC', 'no\u001breply@example.com', 'control characters'],
    ['DEL', 'no\u007freply@example.com', 'control characters'],
    ['a zero-width space', 'no\u200breply@example.com', 'invisible or text-direction'],
    ['a bidi override', 'no\u202ereply@example.com', 'invisible or text-direction'],
    ['a wildcard', '*@example.com', 'wildcards'],
    ['a 300-character local part', `${'a'.repeat(300)}@example.com`, 'invalid local part'],
    ['an IDN domain not in punycode', 'noreply@bücher.example', 'xn--bcher-kva.example'],
    ['a doubled dot in the domain', 'noreply@example..com', 'invalid domain'],
  ])('a sender with %s is refused by the contract rules', (_, senderAddress, reason) => {
    const error = settingsError(() => resolveSettings({ senderAddress, sesIdentity: 'example.com' }));

    expect(error.setting).toBe('senderAddress');
    expect(error.message).toContain(reason);
  });

  test('senderName is kept as written; the handler encodes it', () => {
    expect(resolveSettings({ ...base, senderName: 'Café Shop' }).senderName).toBe('Café Shop');
  });

  test.each([
    ['empty', '  ', 'must be a non-empty string'],
    ['CR/LF', 'Shop\r\nBcc: eve@evil.example', 'control characters'],
    ['a bidi override', 'Shop\u202e', 'invisible or text-direction'],
    ['too long', 'S'.repeat(129), 'longer than 128'],
  ])('a senderName that is %s is refused', (_, senderName, reason) => {
    const error = rejected({ senderName });

    expect(error.setting).toBe('senderName');
    expect(error.message).toContain(reason);
  });

  test('a domain identity is lower-cased, so the IAM identity ARN matches', () => {
    expect(resolveSettings({ senderAddress: 'noreply@example.com', sesIdentity: 'EXAMPLE.COM' }).sesIdentity).toBe(
      'example.com',
    );
  });

  test("an address identity's domain is lower-cased", () => {
    expect(
      resolveSettings({ senderAddress: 'NoReply@example.com', sesIdentity: 'NoReply@EXAMPLE.com' }).sesIdentity,
    ).toBe('NoReply@example.com');
  });

  test.each(['AWS/SES', 'aws/lambda'])('a reserved metrics namespace %p is refused', (metricsNamespace) => {
    const error = rejected({ metricsNamespace });

    expect(error.setting).toBe('metricsNamespace');
    expect(error.message).toContain('reserved');
  });

  test('a sender with CR/LF is refused', () => {
    expect(rejected({ senderAddress: 'noreply@example.com\r\nBcc: eve@evil.example' }).setting).toBe('senderAddress');
  });

  test('an identity that is neither a domain nor an address is refused', () => {
    const error = rejected({ sesIdentity: 'localhost' });

    expect(error.setting).toBe('sesIdentity');
    expect(error.message).toContain('must be a verified SES identity');
  });
});

// ---------------------------------------------------------------- the other rules

describe('resolveSettings: ranges and formats', () => {
  test('an address setting that is no address says so once; other address problems keep their lead-in', () => {
    expect(rejected({ senderAddress: 'bad' }).message).toBe(
      'Invalid setting senderAddress="bad": must be an email address like name@example.com',
    );
    expect(rejected({ senderAddress: 'noreply@bad..example' }).message).toContain(
      'must be an email address such as noreply@example.com: it has an invalid domain',
    );
  });

  test('the log retentions accepted are exactly those CloudWatch Logs offers (the local pipeline checks them too)', () => {
    const offered = Object.values(RetentionDays).filter(
      (v): v is number => typeof v === 'number' && v !== RetentionDays.INFINITE,
    );
    expect([...LOG_RETENTION_DAYS].sort((a, b) => a - b)).toEqual(offered.sort((a, b) => a - b));
    expect(resolveSettings({ ...base, logRetentionDays: 731 }).logRetentionDays).toBe(731);
    expect(rejected({ logRetentionDays: 31 }).message).toContain('must be a retention CloudWatch Logs accepts: 1, 3,');
  });

  test.each<[keyof PipelineSettings, unknown]>([
    ['retentionPeriodSeconds', 59],
    ['retentionPeriodSeconds', 14 * DAY + 1],
    ['functionTimeoutSeconds', 0],
    ['functionTimeoutSeconds', 901],
    ['functionTimeoutSeconds', 1.5],
    ['memorySizeMb', 127],
    ['maxBatchingWindowSeconds', 301],
    ['maxConcurrency', 1],
    ['maxReceiveCount', 1001],
    ['logRetentionDays', 0],
    ['logRetentionDays', 31],
    ['configurationSetName', 'email events'],
    ['idempotencyKeyPrefix', 'email pipeline'],
    ['idempotencyKeyPrefix', ''],
    ['logLevel', 'TRACE'],
    ['metricsNamespace', 'Email Pipeline'],
    ['failOpen', 'true'],
  ])('%s=%j is refused, naming the setting and the value', (setting, value) => {
    const error = rejected({ [setting]: value } as Partial<PipelineSettings>);

    expect(error.setting).toBe(setting);
    expect(error.value).toBe(value);
    expect(error.message).toContain(`Invalid setting ${setting}=${JSON.stringify(value)}: `);
  });

  test('a batch size above 10 is refused without a batching window', () => {
    const error = rejected({ batchSize: 11, maxBatchingWindowSeconds: 0 });

    expect(error.setting).toBe('batchSize');
    expect(error.message).toContain('above 10 needs a batching window');
  });

  test('a batch size above 10 is accepted with a batching window', () => {
    expect(resolveSettings({ ...base, batchSize: 100, maxBatchingWindowSeconds: 5 }).batchSize).toBe(100);
  });
});

// ---------------------------------------------------------------- CDK context

describe('settingsFromContext', () => {
  /** A context of `emailPipeline:`-prefixed keys. */
  function context(values: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(values).map(([k, v]) => [CONTEXT_PREFIX + k, v]));
  }

  const required = { senderAddress: 'noreply@example.com', sesIdentity: 'example.com' };

  test('coerces -c string values to numbers and booleans', () => {
    const settings = settingsFromContext(
      context({ ...required, functionTimeoutSeconds: '60', maxReceiveCount: '8', failOpen: 'true' }),
    );

    expect(settings).toStrictEqual({ ...required, functionTimeoutSeconds: 60, maxReceiveCount: 8, failOpen: true });
  });

  test('reads "false" as false', () => {
    expect(settingsFromContext(context({ ...required, failOpen: 'false' })).failOpen).toBe(false);
  });

  test('keeps cdk.json JSON numbers and booleans as they are', () => {
    const settings = settingsFromContext(context({ ...required, batchSize: 20, failOpen: false }));

    expect(settings).toMatchObject({ batchSize: 20, failOpen: false });
  });

  test('leaves unset keys out, so the defaults apply', () => {
    expect(Object.keys(settingsFromContext(context(required))).sort()).toEqual(['senderAddress', 'sesIdentity']);
  });

  test('treats an empty -c value as unset', () => {
    expect(settingsFromContext(context({ ...required, configurationSetName: '' }))).not.toHaveProperty(
      'configurationSetName',
    );
  });

  test('reads only keys under the emailPipeline: prefix', () => {
    const lookup = { ...context(required), functionTimeoutSeconds: '60', '@aws-cdk/core:flag': true };

    expect(settingsFromContext(lookup)).not.toHaveProperty('functionTimeoutSeconds');
  });

  test.each(['sixty', '1.5', ' ', 'true'])('a bad integer "%s" is named with its emailPipeline: key', (value) => {
    const error = settingsError(() => settingsFromContext(context({ ...required, functionTimeoutSeconds: value })));

    expect(error.setting).toBe('emailPipeline:functionTimeoutSeconds');
    expect(error.message).toContain(`Invalid setting emailPipeline:functionTimeoutSeconds=${JSON.stringify(value)}`);
    expect(error.message).toContain('must be a whole number');
  });

  test.each(['yes', '1', 'TRUE'])('a bad boolean "%s" is named with its emailPipeline: key', (value) => {
    const error = settingsError(() => settingsFromContext(context({ ...required, failOpen: value })));

    expect(error.setting).toBe('emailPipeline:failOpen');
    expect(error.message).toContain('must be true or false');
  });

  test('a string setting given as a number is named with its emailPipeline: key', () => {
    const error = settingsError(() => settingsFromContext(context({ ...required, idempotencyKeyPrefix: 42 })));

    expect(error.setting).toBe('emailPipeline:idempotencyKeyPrefix');
    expect(error.message).toContain('must be a string');
  });

  test.each(['senderAddress', 'sesIdentity'] as const)('a missing %s is required, with the key to set', (key) => {
    const values: Record<string, unknown> = { ...required };
    delete values[key];

    const error = settingsError(() => settingsFromContext(context(values)));

    expect(error.setting).toBe(`emailPipeline:${key}`);
    expect(error.message).toContain(`is required: set it in cdk.json "context" or pass -c emailPipeline:${key}=...`);
  });

  test('knows every setting of PipelineSettings, and the app options', () => {
    const all = Object.keys(
      resolveSettings({
        ...base,
        configurationSetName: 'set',
        senderName: 'Shop',
        teams: { a: { senders: ['a@example.com'] } },
        callbackUrl: 'https://hooks.example.com/email',
        callbackStatuses: ['delivered'],
      }),
    );

    expect(Object.keys(SETTINGS).sort()).toEqual(
      [...all, 'publisherPrincipals', 'redrivePrincipals', 'cancelPrincipals', 'sesTemplateNames', 'alarmEmail'].sort(),
    );
  });

  test.each([
    ['senderAdress', 'senderAddress'],
    ['failopen', 'failOpen'],
    ['maxRecieveCount', 'maxReceiveCount'],
  ])('a misspelled key emailPipeline:%s fails, naming the closest known key %s', (typo, known) => {
    const error = settingsError(() => settingsFromContext({ ...context(required), [CONTEXT_PREFIX + typo]: 'x' }));

    expect(error.setting).toBe(CONTEXT_PREFIX + typo);
    expect(error.message).toContain(`is not a known setting; did you mean ${CONTEXT_PREFIX}${known}?`);
  });

  test('the known keys come from the one declaration: every declared key is accepted', () => {
    // Values of the right kind for each key; a key missing from the declaration would be refused as unknown.
    const sample = { string: 'x', integer: '1', boolean: 'true', list: 'a', object: '{}' } as const;
    const keys = Object.keys(SETTINGS).filter(
      (k) => !['alarmEmail', 'publisherPrincipals', 'redrivePrincipals', 'cancelPrincipals'].includes(k),
    );
    const values = Object.fromEntries(keys.map((k) => [k, sample[SETTINGS[k as keyof typeof SETTINGS].kind]]));

    expect(() => settingsFromContext(context({ ...values, ...required }))).not.toThrow();
  });

  test('cancelPrincipals takes IAM role and user ARNs, comma-separated, and refuses an account', () => {
    expect(
      settingsFromContext(
        context({
          ...required,
          cancelPrincipals: 'arn:aws:iam::123456789012:role/ops, arn:aws:iam::123456789012:user/alice',
        }),
      ),
    ).toMatchObject({
      cancelPrincipals: ['arn:aws:iam::123456789012:role/ops', 'arn:aws:iam::123456789012:user/alice'],
    });
    expect(() => settingsFromContext(context({ ...required, cancelPrincipals: '123456789012' }))).toThrow(
      /emailPipeline:cancelPrincipals=.*accounts are not accepted/,
    );
  });

  test('publisherPrincipals and sesTemplateNames are read as lists: comma-separated from -c, arrays from cdk.json', () => {
    const fromCli = settingsFromContext(
      context({
        ...required,
        publisherPrincipals: '123456789012, arn:aws:iam::123456789012:role/orders',
        sesTemplateNames: 'welcome,receipt',
      }),
    );
    const fromJson = settingsFromContext(
      context({
        ...required,
        publisherPrincipals: ['123456789012', 'arn:aws:iam::123456789012:role/orders'],
        sesTemplateNames: ['welcome', 'receipt'],
      }),
    );

    expect(fromCli).toMatchObject({
      publisherPrincipals: ['123456789012', 'arn:aws:iam::123456789012:role/orders'],
      sesTemplateNames: ['welcome', 'receipt'],
    });
    expect(fromJson).toStrictEqual(fromCli);
  });

  test.each(['12345', 'arn:aws:iam::123456789012:group/ops', '*', 'arn:aws:iam::*:role/x'])(
    'a publisher principal %p that is neither an account id nor an IAM role/user ARN is refused',
    (principal) => {
      const error = settingsError(() => settingsFromContext(context({ ...required, publisherPrincipals: principal })));

      expect(error.setting).toBe('emailPipeline:publisherPrincipals');
      expect(error.message).toContain('12-digit account id or an IAM ARN');
    },
  );

  test('an empty entry in a list is refused', () => {
    const error = settingsError(() => settingsFromContext(context({ ...required, sesTemplateNames: 'a,,b' })));

    expect(error.setting).toBe('emailPipeline:sesTemplateNames');
  });

  test.each(['a@b..c', 'oncall', 'On Call <oncall@example.com>'])('an alarmEmail %p is refused', (alarmEmail) => {
    const error = settingsError(() => settingsFromContext(context({ ...required, alarmEmail })));

    expect(error.setting).toBe('emailPipeline:alarmEmail');
  });

  test('its output resolves to the same settings as the props would', () => {
    const fromContext = settingsFromContext(
      context({ ...required, retentionPeriodSeconds: String(2 * DAY), functionTimeoutSeconds: '20' }),
    );

    expect(resolveSettings(fromContext)).toStrictEqual(
      resolveSettings({ ...required, retentionPeriodSeconds: 2 * DAY, functionTimeoutSeconds: 20 }),
    );
  });
});

// ---------------------------------------------------------------- send confirmation grace

describe('resolveSettings: sendConfirmationGraceSeconds', () => {
  test.each([0, 1.5, 12 * 3600 + 1])('%j is refused, naming the setting and the range', (value) => {
    const error = rejected({ sendConfirmationGraceSeconds: value });

    expect(error.setting).toBe('sendConfirmationGraceSeconds');
    expect(error.message).toContain('must be a whole number from 1 to 43200 seconds');
  });

  test('a grace as long as the retention period is refused: the waiting message would expire', () => {
    const error = rejected({ retentionPeriodSeconds: 6000, sendConfirmationGraceSeconds: 6000 });

    expect(error.setting).toBe('sendConfirmationGraceSeconds');
    expect(error.message).toContain('must be shorter than the queue retention period (retentionPeriodSeconds=6000)');
  });

  test('a grace shorter than the retention period is kept', () => {
    expect(
      resolveSettings({ ...base, retentionPeriodSeconds: 6000, sendConfirmationGraceSeconds: 5999 })
        .sendConfirmationGraceSeconds,
    ).toBe(5999);
  });
});
