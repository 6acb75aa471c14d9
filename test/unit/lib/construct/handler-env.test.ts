import { readSettings } from '../../../../lambdas/kernel/environment';
import { CONTEXT_PREFIX, SettingsError, resolveSettings, settingsFromContext } from '../../../../lib/settings';
import {
  functionNodeOptions,
  handlerEnvironment,
  scheduleEnvironment,
  semiSpaceMb,
} from '../../../../lib/construct/handler-env';
import { readScheduleSettings } from '../../../../lambdas/kernel/environment';
import { SETTINGS, type SettingDeclaration } from '../../../../lib/settings';

const refs = {
  topicArn: 'arn:aws:sns:eu-west-1:123456789012:emails',
  tableName: 'table',
  sourceQueueUrl: 'https://queue/src',
  scheduleQueueUrl: 'https://queue/schedule',
  deadLetterQueueUrl: 'https://queue/dlq',
  ledgerTableName: 'ledger',
};

const required = { senderAddress: 'noreply@example.com', sesIdentity: 'example.com' } as const;

function fromContext(values: Record<string, string>): ReturnType<typeof resolveSettings> {
  const context = Object.fromEntries(Object.entries(values).map(([key, value]) => [CONTEXT_PREFIX + key, value]));
  return resolveSettings(settingsFromContext(context));
}

describe('handlerEnvironment', () => {
  test('sets every setting the declaration gives a variable, under that variable', () => {
    const resolved = resolveSettings({ ...required, senderName: 'Shop', configurationSetName: 'email-events' });
    const environment = handlerEnvironment(resolved, refs);

    const declared = (Object.entries(SETTINGS) as [keyof typeof resolved, SettingDeclaration][]).filter(
      ([, declaration]) => declaration.env !== undefined,
    );
    expect(declared.length).toBeGreaterThan(0);
    for (const [name, declaration] of declared) {
      expect({ [name]: environment[declaration.env!] }).toEqual({ [name]: String(resolved[name]) });
    }
  });

  test('writes the variables in the order the function template has them', () => {
    const resolved = resolveSettings({ ...required, senderName: 'Shop', configurationSetName: 'email-events' });

    expect(Object.keys(handlerEnvironment(resolved, refs))).toEqual([
      'SENDER_ADDRESS',
      'SENDER_NAME',
      'TOPIC_ARN',
      'SES_CONFIGURATION_SET',
      'IDEMPOTENCY_TABLE_NAME',
      'IDEMPOTENCY_KEY_PREFIX',
      'DEDUPE_WINDOW_SECONDS',
      'SOURCE_QUEUE_URL',
      'SCHEDULE_QUEUE_URL',
      'DEAD_LETTER_QUEUE_URL',
      'MAX_RECEIVE_COUNT',
      'FAIL_OPEN',
      'LEDGER_TABLE_NAME',
      'SEND_CONFIRMATION_GRACE_SECONDS',
      'RETRY_BUDGET_SECONDS',
      'MAX_SCHEDULE_AHEAD_SECONDS',
      'MAX_SEND_RATE',
      'MAX_CONCURRENCY',
      'POWERTOOLS_SERVICE_NAME',
      'POWERTOOLS_LOG_LEVEL',
      'POWERTOOLS_METRICS_NAMESPACE',
      'SES_TIMEOUT_MS',
      'RETRY_BASE_SECONDS',
      'SYSTEMIC_RETRY_SECONDS',
      'RETRY_CAP_SECONDS',
      'HIGH_PRIORITY_RATE_SHARE',
    ]);
  });

  test('leaves out the optional settings and the ledger table when they are not set', () => {
    const environment = handlerEnvironment(resolveSettings(required), { ...refs, ledgerTableName: undefined });

    expect(environment).not.toHaveProperty('SENDER_NAME');
    expect(environment).not.toHaveProperty('SES_CONFIGURATION_SET');
    expect(environment).not.toHaveProperty('LEDGER_TABLE_NAME');
  });

  test('handler tuning from cdk.json context reaches the handler, as the local pipeline runs it', () => {
    const tuning = { sesTimeoutMs: 2500, retryBaseSeconds: 4, systemicRetrySeconds: 600, retryCapSeconds: 60 };
    const asContext = Object.fromEntries(Object.entries(tuning).map(([name, value]) => [name, String(value)]));

    const resolved = fromContext({ ...required, ...asContext });

    expect(readSettings(handlerEnvironment(resolved, refs))).toMatchObject(tuning);
  });

  test('an SES timeout over half the function timeout is refused by the shared resolver, so locally too', () => {
    const attempt = (): unknown => fromContext({ ...required, functionTimeoutSeconds: '10', sesTimeoutMs: '6000' });

    expect(attempt).toThrow(SettingsError);
    expect(attempt).toThrow('Invalid setting sesTimeoutMs=6000: must be a whole number from 100 to half the function');
  });
});

describe('functionNodeOptions', () => {
  // V8 in Node 22 and later sizes the young generation from the host's memory (64 MiB semi-spaces on
  // a 24 GiB machine), not the function's: the option pins it to the function.
  test.each([
    [128, 4],
    [256, 8],
    [512, 16],
    [1024, 16],
    [10_240, 16],
    [16, 1],
  ])('a %i MB function gets semi-spaces of %i MiB', (memoryMb, semiMb) => {
    expect(semiSpaceMb(memoryMb)).toBe(semiMb);
    expect(functionNodeOptions(memoryMb)).toBe(`--enable-source-maps --max-semi-space-size=${semiMb}`);
  });

  test('the young generation (three semi-spaces) stays under a tenth of the function', () => {
    for (const memoryMb of [128, 256, 512, 1024, 3008])
      expect(3 * semiSpaceMb(memoryMb)).toBeLessThanOrEqual(memoryMb / 10);
  });
});

describe('scheduleEnvironment', () => {
  test('is read back by the schedule function, its metrics under the send function’s namespace and service', () => {
    const resolved = resolveSettings({ ...required, metricsNamespace: 'Mail' });
    const environment = scheduleEnvironment(resolved, {
      scheduleQueueUrl: 'https://queue/schedule',
      workQueueUrl: 'https://queue/src',
      highPriorityQueueUrl: 'https://queue/high',
    });

    expect(readScheduleSettings(environment)).toStrictEqual({
      scheduleQueueUrl: 'https://queue/schedule',
      workQueueUrl: 'https://queue/src',
      highPriorityQueueUrl: 'https://queue/high',
    });
    expect(environment).toMatchObject({
      POWERTOOLS_METRICS_NAMESPACE: 'Mail',
      POWERTOOLS_SERVICE_NAME: 'email-pipeline',
    });
  });
});
