/** The `teams` setting: defaults, every rule naming its field, context reading, and no teams meaning none. */
import {
  CONTEXT_PREFIX,
  resolveSettings,
  effectiveSharePercent,
  SettingsError,
  settingsFromContext,
  teamConcurrency,
  teamOwnUrls,
  type PipelineSettings,
} from '../../../../lib/settings';

const base = { senderAddress: 'noreply@example.com', sesIdentity: 'example.com' } as const;

function refusal(teams: unknown): SettingsError {
  try {
    resolveSettings({ ...base, teams } as PipelineSettings);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return error as SettingsError;
  }
  throw new Error('expected a SettingsError, but nothing was thrown');
}

test('without teams, or with an empty object, the resolved settings have no teams at all', () => {
  expect(resolveSettings(base)).not.toHaveProperty('teams');
  expect(resolveSettings({ ...base, teams: {} })).not.toHaveProperty('teams');
});

test('a team gets its defaults: no publishers, no high priority, no share, no tenant, no readers or cancelers', () => {
  const resolved = resolveSettings({ ...base, teams: { billing: { senders: ['billing@example.com'] } } });

  expect(resolved.teams).toEqual({
    billing: {
      senders: ['billing@example.com'],
      publishers: [],
      highPriority: false,
      sesTenant: false,
      statusReaders: [],
      cancelers: [],
    },
  });
});

test('every field is kept as given', () => {
  const team = {
    senders: ['security@example.com', 'alerts@example.com'],
    publishers: ['123456789012', 'arn:aws:iam::123456789012:role/auth'],
    highPriority: true,
    rateSharePercent: 50,
    sesTenant: true,
    statusReaders: ['arn:aws:iam::123456789012:role/support'],
    cancelers: ['arn:aws:iam::123456789012:user/alice'],
  };

  expect(resolveSettings({ ...base, teams: { security: team } }).teams).toEqual({ security: team });
});

test.each([
  ['Billing', 'upper case'],
  ['9lives', 'a leading digit'],
  ['bill_ing', 'an underscore'],
  ['a#b', 'a #, which would break the key namespace'],
  ['a/b', 'a /, which would break the attachment prefix'],
  ['x'.repeat(33), '33 characters'],
])('the team name %j is refused (%s), naming the team', (name) => {
  const error = refusal({ [name]: { senders: ['a@example.com'] } });

  expect(error.setting).toBe(`teams.${name}`);
  expect(error.message).toContain('lowercase');
});

test.each([
  [{}, 'teams.billing.senders', 'non-empty'],
  [{ senders: [] }, 'teams.billing.senders', 'non-empty'],
  [{ senders: 'billing@example.com' }, 'teams.billing.senders', 'list'],
  [{ senders: ['billing@example.com', 'not an address'] }, 'teams.billing.senders[1]', 'email address'],
  [{ senders: ['Billing <billing@example.com>'] }, 'teams.billing.senders[0]', 'bare address'],
  [{ senders: ['billing@other.example'] }, 'teams.billing.senders[0]', 'SES identity example.com'],
  [{ senders: ['b@example.com', 'b@example.com'] }, 'teams.billing.senders', 'twice'],
  [{ senders: ['b@example.com'], publishers: ['orders'] }, 'teams.billing.publishers[0]', 'account id'],
  [{ senders: ['b@example.com'], cancelers: ['123456789012'] }, 'teams.billing.cancelers[0]', 'role or user ARN'],
  [{ senders: ['b@example.com'], statusReaders: [''] }, 'teams.billing.statusReaders[0]', 'role or user ARN'],
  [{ senders: ['b@example.com'], highPriority: 'yes' }, 'teams.billing.highPriority', 'true or false'],
  [{ senders: ['b@example.com'], sesTenant: 1 }, 'teams.billing.sesTenant', 'true or false'],
  [{ senders: ['b@example.com'], rateSharePercent: 0 }, 'teams.billing.rateSharePercent', '1 to 100'],
  [{ senders: ['b@example.com'], rateSharePercent: 101 }, 'teams.billing.rateSharePercent', '1 to 100'],
  [{ senders: ['b@example.com'], rateSharePercent: 2.5 }, 'teams.billing.rateSharePercent', '1 to 100'],
  [{ senders: ['b@example.com'], sender: ['b@example.com'] }, 'teams.billing.sender', 'did you mean senders'],
  ['billing@example.com', 'teams.billing', 'senders'],
])('team %j is refused, naming %s', (team, field, reason) => {
  const error = refusal({ billing: team });

  expect(error.setting).toBe(field);
  expect(error.message).toContain(reason);
});

test('rate shares may sum to 100 but not beyond, and the error names the shares', () => {
  const teams = (a: number, b: number) => ({
    billing: { senders: ['billing@example.com'], rateSharePercent: a },
    security: { senders: ['security@example.com'], rateSharePercent: b },
  });
  expect(() => resolveSettings({ ...base, teams: teams(50, 50) })).not.toThrow();

  const error = refusal(teams(60, 50));
  expect(error.setting).toBe('teams.*.rateSharePercent');
  expect(error.message).toContain('sum to 110');
});

test('with an address identity, a sender must be that address', () => {
  const identity = { senderAddress: 'mail@example.com', sesIdentity: 'mail@example.com' };
  expect(() => resolveSettings({ ...identity, teams: { a: { senders: ['mail@example.com'] } } })).not.toThrow();
  expect(() => resolveSettings({ ...identity, teams: { a: { senders: ['other@example.com'] } } })).toThrow(
    /teams\.a\.senders\[0\].*SES identity mail@example.com/,
  );
});

test('teams is not an object: refused', () => {
  expect(refusal(['billing']).setting).toBe('teams');
});

describe('from context', () => {
  const required = {
    [`${CONTEXT_PREFIX}senderAddress`]: 'noreply@example.com',
    [`${CONTEXT_PREFIX}sesIdentity`]: 'example.com',
  };
  const teams = { billing: { senders: ['billing@example.com'], rateSharePercent: 50 } };

  test('cdk.json gives an object, -c gives JSON text: both read the same', () => {
    const fromJson = settingsFromContext({ ...required, [`${CONTEXT_PREFIX}teams`]: teams });
    const fromCli = settingsFromContext({ ...required, [`${CONTEXT_PREFIX}teams`]: JSON.stringify(teams) });

    expect(fromJson.teams).toEqual(teams);
    expect(fromCli.teams).toEqual(teams);
  });

  test.each([['billing'], ['[1]'], [42], ['{not json']])('%j is refused as not an object', (value) => {
    expect(() => settingsFromContext({ ...required, [`${CONTEXT_PREFIX}teams`]: value })).toThrow(
      /emailPipeline:teams=.*must be a JSON object/,
    );
  });
});

test("a team's part of the concurrency: its share of maxConcurrency, an equal part of what shares leave without one, at least the least", () => {
  const teams = resolveSettings({
    ...base,
    teams: {
      billing: { senders: ['billing@example.com'], rateSharePercent: 60 },
      security: { senders: ['security@example.com'] },
      growth: { senders: ['growth@example.com'] },
    },
  }).teams!;
  expect(effectiveSharePercent(teams, 'billing')).toBe(60);
  expect(effectiveSharePercent(teams, 'security')).toBe(20);
  expect(teamConcurrency(teams, 'billing', 10)).toBe(6);
  // 20 % of 10 is 2; of 5, 1: Lambda's least for a mapping is 2, npm start's (least 1) one consumer.
  expect(teamConcurrency(teams, 'growth', 10)).toBe(2);
  expect(teamConcurrency(teams, 'growth', 5)).toBe(2);
  expect(teamConcurrency(teams, 'growth', 5, 1)).toBe(1);
  expect(teamConcurrency(teams, 'billing', 100)).toBe(60);
  const full = resolveSettings({
    ...base,
    teams: {
      billing: { senders: ['billing@example.com'], rateSharePercent: 100 },
      other: { senders: ['other@example.com'] },
    },
  }).teams!;
  // Shares that leave nothing: a team without one still runs the least.
  expect(effectiveSharePercent(full, 'other')).toBe(0);
  expect(teamConcurrency(full, 'other', 10)).toBe(2);
});

test('a team has a status URL of its own with any status reader or canceller, a cancel URL with any canceller', () => {
  const role = 'arn:aws:iam::123456789012:role/ops';
  expect(teamOwnUrls({ statusReaders: [], cancelers: [] })).toEqual({ status: false, cancel: false });
  expect(teamOwnUrls({ statusReaders: [role], cancelers: [] })).toEqual({ status: true, cancel: false });
  expect(teamOwnUrls({ statusReaders: [], cancelers: [role] })).toEqual({ status: true, cancel: true });
});
