/** The callback settings' rules: each refusal names the field at fault and says why. */
import {
  callbackUrlField,
  callbackUrlProblem,
  CALLBACK_STATUSES,
  configuredCallbacks,
} from '../../../../lib/settings/callbacks';
import { resolveSettings, SettingsError } from '../../../../lib/settings';

const base = { senderAddress: 'noreply@example.com', sesIdentity: 'example.com' };

function refusal(run: () => unknown): SettingsError {
  try {
    run();
  } catch (error) {
    if (error instanceof SettingsError) return error;
    throw error;
  }
  throw new Error('expected a SettingsError');
}

describe('callbackUrlProblem', () => {
  test.each(['https://hooks.example.com/email', 'http://127.0.0.1:8080/cb', 'https://h.example.com:8443/a?b=c'])(
    'takes %s',
    (url) => expect(callbackUrlProblem(url)).toBeUndefined(),
  );

  test.each([
    ['hooks.example.com/email', 'absolute URL'],
    ['ftp://hooks.example.com/', 'https://'],
    ['https://user:pw@hooks.example.com/', 'user or password'],
    ['https://hooks.example.com/#x', 'fragment'],
  ])('refuses %s', (url, why) => expect(callbackUrlProblem(url)).toContain(why));
});

describe('callback settings', () => {
  test('a pipeline callback with its statuses resolves; the retry settings default', () => {
    const resolved = resolveSettings({
      ...base,
      callbackUrl: 'https://hooks.example.com/email',
      callbackStatuses: ['delivered', 'bounced'],
    });
    expect(resolved).toMatchObject({
      callbackUrl: 'https://hooks.example.com/email',
      callbackStatuses: ['delivered', 'bounced'],
      callbackRetryBaseSeconds: 30,
      callbackRetryWindowSeconds: 86_400,
    });
  });

  test('no callback: neither URL nor statuses appear', () => {
    const resolved = resolveSettings(base);
    expect(resolved).not.toHaveProperty('callbackUrl');
    expect(resolved).not.toHaveProperty('callbackStatuses');
  });

  test('statuses without a URL are refused, naming both', () => {
    const error = refusal(() => resolveSettings({ ...base, callbackStatuses: ['delivered'] }));
    expect(error.setting).toBe('callbackStatuses');
    expect(error.message).toContain('set callbackUrl too');
  });

  test('a status the ledger never reports is refused by its index', () => {
    const error = refusal(() =>
      resolveSettings({ ...base, callbackUrl: 'https://h.example.com/', callbackStatuses: ['delivered', 'opened'] }),
    );
    expect(error.setting).toBe('callbackStatuses[1]');
    expect(error.message).toContain(CALLBACK_STATUSES.join(', '));
  });

  test("a team's callback is its own field", () => {
    const resolved = resolveSettings({
      ...base,
      teams: {
        billing: { senders: ['billing@example.com'], callbackUrl: 'https://billing.example.com/hooks' },
        security: { senders: ['security@example.com'] },
      },
    });
    expect(resolved.teams?.billing?.callbackUrl).toBe('https://billing.example.com/hooks');
    expect(resolved.teams?.security).not.toHaveProperty('callbackUrl');
    const error = refusal(() =>
      resolveSettings({
        ...base,
        teams: { billing: { senders: ['billing@example.com'], callbackUrl: 'billing.example.com' } },
      }),
    );
    expect(error.setting).toBe('teams.billing.callbackUrl');
  });

  test('the retry window is bounded', () => {
    expect(refusal(() => resolveSettings({ ...base, callbackRetryWindowSeconds: 10 })).setting).toBe(
      'callbackRetryWindowSeconds',
    );
  });
});

describe('configuredCallbacks', () => {
  test("the pipeline's own as `*` and each team with a URL, with its statuses; none without a URL", () => {
    const settings = resolveSettings({
      ...base,
      callbackUrl: 'https://hooks.example.com/',
      callbackStatuses: ['bounced'],
      teams: {
        billing: { senders: ['billing@example.com'], callbackUrl: 'https://billing.example.com/h' },
        support: { senders: ['support@example.com'] },
      },
    });
    expect(configuredCallbacks(settings)).toEqual({
      '*': { url: 'https://hooks.example.com/', statuses: ['bounced'] },
      billing: { url: 'https://billing.example.com/h' },
    });
    expect(configuredCallbacks(resolveSettings(base))).toEqual({});
  });

  test('the field of each target: callbackUrl, or the team’s', () => {
    expect(callbackUrlField('*')).toBe('callbackUrl');
    expect(callbackUrlField('billing')).toBe('teams.billing.callbackUrl');
  });
});
