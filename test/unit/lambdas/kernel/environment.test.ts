import { ENV, readLedgerSettings, readScheduleSettings, readSettings } from '../../../../lambdas/kernel/environment';
import { resolveSettings } from '../../../../lib/settings';
import { handlerEnvironment, ledgerEnvironment } from '../../../../lib/construct/handler-env';

/** Every required variable, set; spread and override one at a time. */
const env = {
  SENDER_ADDRESS: 'noreply@example.com',
  TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:emails',
  IDEMPOTENCY_TABLE_NAME: 'email-idempotency',
  IDEMPOTENCY_KEY_PREFIX: 'email-pipeline',
  DEDUPE_WINDOW_SECONDS: '432000',
  SOURCE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails',
  SCHEDULE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails-schedule',
  DEAD_LETTER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails-dlq',
  MAX_RECEIVE_COUNT: '5',
  RETRY_BUDGET_SECONDS: '86400',
  MAX_SCHEDULE_AHEAD_SECONDS: '86400',
  MAX_SEND_RATE: '14',
  MAX_CONCURRENCY: '10',
  SES_TIMEOUT_MS: '5000',
  RETRY_BASE_SECONDS: '2',
  SYSTEMIC_RETRY_SECONDS: '300',
  RETRY_CAP_SECONDS: '300',
  HIGH_PRIORITY_RATE_SHARE: '20',
} as const;

function without(name: string): Record<string, string> {
  const copy: Record<string, string> = { ...env };
  delete copy[name];
  return copy;
}

describe('readSettings', () => {
  test('reads every variable into typed settings', () => {
    expect(readSettings(env)).toStrictEqual({
      senderAddress: 'noreply@example.com',
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:emails',
      tableName: 'email-idempotency',
      keyPrefix: 'email-pipeline',
      dedupeWindowSeconds: 432000,
      sourceQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails',
      scheduleQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails-schedule',
      deadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails-dlq',
      maxReceiveCount: 5,
      failOpen: false,
      sesTimeoutMs: 5000,
      retryBaseSeconds: 2,
      systemicRetrySeconds: 300,
      retryCapSeconds: 300,
      retryBudgetSeconds: 86400,
      maxScheduleAheadSeconds: 86400,
      maxSendRate: 14,
      maxConcurrency: 10,
      highPriorityRateShare: 20,
    });
  });

  test('reads the high-priority queue when set', () => {
    expect(readSettings({ ...env, HIGH_PRIORITY_QUEUE_URL: 'https://sqs/1/high' }).highPriorityQueueUrl).toBe(
      'https://sqs/1/high',
    );
  });

  test('reads the teams when TEAMS is set, refuses them unreadable, and has none without it', () => {
    const teams = { billing: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:billing', senders: ['b@example.com'] } };
    expect(readSettings({ ...env, TEAMS: JSON.stringify(teams) }).teams).toEqual(teams);
    expect(() => readSettings({ ...env, TEAMS: '{"billing":{}}' })).toThrow(/TEAMS.*billing needs a topicArn/);
    expect(readSettings(env)).not.toHaveProperty('teams');
  });

  test('handlerEnvironment writes TEAMS only for a pipeline with teams, and the function reads back what it wrote', () => {
    const refs = {
      topicArn: 'arn:t',
      tableName: 't',
      sourceQueueUrl: 'q',
      scheduleQueueUrl: 's',
      deadLetterQueueUrl: 'd',
    };
    const settings = resolveSettings({ senderAddress: 'noreply@example.com', sesIdentity: 'example.com' });
    expect(handlerEnvironment(settings, refs)).not.toHaveProperty('TEAMS');
    const teams = { billing: { topicArn: 'arn:b', highPriorityTopicArn: 'arn:bh', senders: ['b@example.com'] } };
    const written = handlerEnvironment(settings, { ...refs, teams });
    expect(readSettings(written).teams).toEqual(teams);
  });

  test('reads the optional variables when set', () => {
    const settings = readSettings({
      ...env,
      SES_CONFIGURATION_SET: 'email-events',
      SES_TIMEOUT_MS: '2500',
      RETRY_BASE_SECONDS: '4',
      SYSTEMIC_RETRY_SECONDS: '600',
    });

    expect(settings).toMatchObject({
      configurationSetName: 'email-events',
      sesTimeoutMs: 2500,
      retryBaseSeconds: 4,
      systemicRetrySeconds: 600,
    });
  });

  test('leaves out an empty configuration set', () => {
    expect(readSettings({ ...env, SES_CONFIGURATION_SET: '' })).not.toHaveProperty('configurationSetName');
  });

  test.each(Object.keys(env).filter((name) => name !== 'HIGH_PRIORITY_RATE_SHARE'))(
    'a missing %s is named in the error',
    (name) => {
      expect(() => readSettings(without(name))).toThrow(`Missing required environment variable ${name}`);
    },
  );

  test('a blank required string variable counts as missing', () => {
    expect(() => readSettings({ ...env, SENDER_ADDRESS: '  ' })).toThrow(ENV.senderAddress);
  });

  test.each(['abc', '0', '-5', '1.5', '12abc'])(
    'MAX_RECEIVE_COUNT="%s" is rejected as not a positive integer',
    (value) => {
      expect(() => readSettings({ ...env, MAX_RECEIVE_COUNT: value })).toThrow(
        `Environment variable MAX_RECEIVE_COUNT must be a positive integer, got "${value}"`,
      );
    },
  );

  test('a bad tuning integer is rejected by name', () => {
    expect(() => readSettings({ ...env, SES_TIMEOUT_MS: 'soon' })).toThrow('SES_TIMEOUT_MS');
  });

  test.each([
    ['true', true],
    ['false', false],
    ['TRUE', true],
    ['False', false],
  ])('FAIL_OPEN="%s" reads as %s', (value, expected) => {
    expect(readSettings({ ...env, FAIL_OPEN: value }).failOpen).toBe(expected);
  });

  test('FAIL_OPEN unset means fail closed', () => {
    expect(readSettings(env).failOpen).toBe(false);
  });

  test.each(['yes', '1', 'on'])('FAIL_OPEN="%s" is rejected by name', (value) => {
    expect(() => readSettings({ ...env, FAIL_OPEN: value })).toThrow(
      `Environment variable FAIL_OPEN must be "true" or "false"`,
    );
  });

  test('reads back the environment that the construct and the local pipeline build', () => {
    const resolved = resolveSettings({
      senderAddress: 'noreply@example.com',
      sesIdentity: 'example.com',
      configurationSetName: 'email-events',
      failOpen: true,
    });
    const refs = {
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:emails',
      tableName: 'table',
      sourceQueueUrl: 'https://queue/src',
      scheduleQueueUrl: 'https://queue/schedule',
      deadLetterQueueUrl: 'https://queue/dlq',
    };

    expect(readSettings(handlerEnvironment(resolved, refs))).toMatchObject({
      senderAddress: resolved.senderAddress,
      configurationSetName: 'email-events',
      tableName: 'table',
      keyPrefix: resolved.idempotencyKeyPrefix,
      dedupeWindowSeconds: resolved.dedupeWindowSeconds,
      sourceQueueUrl: 'https://queue/src',
      scheduleQueueUrl: 'https://queue/schedule',
      deadLetterQueueUrl: 'https://queue/dlq',
      maxReceiveCount: resolved.maxReceiveCount,
      failOpen: true,
    });
  });
});

describe('readScheduleSettings', () => {
  const schedule = {
    SCHEDULE_QUEUE_URL: 'https://sqs/1/schedule',
    SOURCE_QUEUE_URL: 'https://sqs/1/work',
    HIGH_PRIORITY_QUEUE_URL: 'https://sqs/1/high',
  };

  test('reads the schedule queue and both lanes’ queues', () => {
    expect(readScheduleSettings(schedule)).toStrictEqual({
      scheduleQueueUrl: 'https://sqs/1/schedule',
      workQueueUrl: 'https://sqs/1/work',
      highPriorityQueueUrl: 'https://sqs/1/high',
    });
  });

  test.each(['SCHEDULE_QUEUE_URL', 'SOURCE_QUEUE_URL'])('a missing %s is named in the error', (name) => {
    const env: Record<string, string> = { ...schedule };
    delete env[name];
    expect(() => readScheduleSettings(env)).toThrow(`Missing required environment variable ${name}`);
  });

  test('without the high-priority queue, none is read', () => {
    expect(readScheduleSettings({ ...schedule, HIGH_PRIORITY_QUEUE_URL: '' })).not.toHaveProperty(
      'highPriorityQueueUrl',
    );
  });
});

describe('the ledger function: its teams', () => {
  const refs = {
    tableName: 'ledger',
    deliveryStatusTopicArn: 'arn:status',
    origin: { accountId: '123456789012', configurationSetName: 'set', senderRoleName: 'role' },
    idempotencyTableName: 'claims',
  };
  const base = { dedupeWindowSeconds: 1000, idempotencyKeyPrefix: 'email-pipeline' };
  const team = { senders: ['a@example.com'], highPriority: false } as const;

  test('with teams, the construct writes their names and the function reads them back', () => {
    const teams = { billing: team, security: team } as never;
    const environment = ledgerEnvironment({ ...base, teams }, refs);
    expect(environment.TEAM_NAMES).toBe('billing,security');
    expect(readLedgerSettings(environment).teamNames).toEqual(['billing', 'security']);
  });

  test('without teams, no variable, and no team names', () => {
    const environment = ledgerEnvironment(base, refs);
    expect(environment).not.toHaveProperty('TEAM_NAMES');
    expect(readLedgerSettings(environment).teamNames).toBeUndefined();
  });

  test('a name that cannot be a team is refused, naming the variable', () => {
    const environment = { ...ledgerEnvironment(base, refs), TEAM_NAMES: 'billing,Ops' };
    expect(() => readLedgerSettings(environment)).toThrow('Environment variable TEAM_NAMES names "Ops"');
  });
});
