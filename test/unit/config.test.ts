import {
  CONTEXT_KEYS,
  CONTEXT_PREFIX,
  DEFAULTS,
  SettingsError,
  resolveSettings,
  settingsFromContext,
  type PipelineSettings,
} from '../../lib/config';

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
      dedupeWindowSeconds: 16 * DAY,
      functionTimeoutSeconds: 30,
      memorySizeMb: 256,
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
      retryBudgetSeconds: DAY,
      maxSendRate: 14,
      retryingTooLongSeconds: 900,
    });
  });

  test('the default dedupe window covers the retry budget, the DLQ retention and one day, so a late redrive is still deduplicated', () => {
    expect(resolveSettings({ ...base, retentionPeriodSeconds: 2 * DAY }).dedupeWindowSeconds).toBe(16 * DAY);
  });

  test('the default dedupe window is never shorter than the retry budget plus the retention period plus one day', () => {
    expect(resolveSettings({ ...base, retentionPeriodSeconds: 14 * DAY }).dedupeWindowSeconds).toBe(16 * DAY);
    expect(
      resolveSettings({ ...base, retentionPeriodSeconds: 14 * DAY, retryBudgetSeconds: 3 * DAY }).dedupeWindowSeconds,
    ).toBe(18 * DAY);
  });

  test('the default visibility timeout is 6 x the function timeout', () => {
    expect(resolveSettings({ ...base, functionTimeoutSeconds: 45 }).visibilityTimeoutSeconds).toBe(270);
  });

  test('keeps explicit values', () => {
    const settings = resolveSettings({
      ...base,
      configurationSetName: 'email-events',
      dedupeWindowSeconds: 10 * DAY,
      visibilityTimeoutSeconds: 600,
      maxReceiveCount: 8,
      failOpen: true,
      logLevel: 'DEBUG',
    });

    expect(settings).toMatchObject({
      configurationSetName: 'email-events',
      dedupeWindowSeconds: 10 * DAY,
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
  test('a dedupe window shorter than the retention period plus the retry budget is refused', () => {
    const error = rejected({ retentionPeriodSeconds: 4 * DAY, dedupeWindowSeconds: 5 * DAY - 1 });

    expect(error.setting).toBe('dedupeWindowSeconds');
    expect(error.value).toBe(5 * DAY - 1);
    expect(error.message).toContain(`dedupeWindowSeconds=${5 * DAY - 1}`);
    expect(error.message).toContain(
      `must be at least the queue retention period plus the retry budget (retentionPeriodSeconds=${4 * DAY} + retryBudgetSeconds=${DAY})`,
    );
  });

  test('a dedupe window equal to the retention period plus the retry budget is accepted', () => {
    expect(resolveSettings({ ...base, dedupeWindowSeconds: 5 * DAY }).dedupeWindowSeconds).toBe(5 * DAY);
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

  test('a sender that is not an email address is refused', () => {
    const error = rejected({ senderAddress: 'Example <noreply@example.com>' });

    expect(error.setting).toBe('senderAddress');
    expect(error.message).toContain('must be a plain email address');
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
  /** A context lookup over `emailPipeline:`-prefixed keys. */
  function context(values: Record<string, unknown>): (key: string) => unknown {
    const prefixed = Object.fromEntries(Object.entries(values).map(([k, v]) => [CONTEXT_PREFIX + k, v]));
    return (key) => prefixed[key];
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
    const lookup = (key: string) => (key === 'functionTimeoutSeconds' ? '60' : context(required)(key));

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

  test('knows every setting of PipelineSettings', () => {
    const all = Object.keys(resolveSettings({ ...base, configurationSetName: 'set' })).sort();

    expect(Object.keys(CONTEXT_KEYS).sort()).toEqual(all);
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
