/** `--team NAME`, as the commands read it: a name checked against TEAM_NAME, and the team's key namespace. */
import { UsageError } from '../../../../lib/cli/errors';
import { OperationError } from '../../../../lib/cli/errors';
import { keyOfTeam, teamOption, teamPrefix, teamTopicsOf } from '../../../../lib/cli/team-option';

test('a team name is checked: a usage error naming what a team name is', () => {
  expect(teamOption(undefined, 'usage')).toBeUndefined();
  expect(teamOption('billing-2', 'usage')).toBe('billing-2');
  for (const bad of ['Billing', 'billing#x', 'bill/ing', '', '1billing', 'b'.repeat(33)]) {
    expect(() => teamOption(bad, 'usage')).toThrow(UsageError);
    expect(() => teamOption(bad, 'usage')).toThrow(`${JSON.stringify(bad)} cannot be a team: a team name is 1 to 32`);
  }
});

test("a team's key is <team>#<key>; without a team the key is itself", () => {
  expect(keyOfTeam('billing', 'order-42')).toBe('billing#order-42');
  expect(keyOfTeam(undefined, 'order-42')).toBe('order-42');
  expect(teamPrefix('billing')).toBe('billing#');
});

test("a team's topics from the outputs: Teams as a stack's JSON text or npm start's object; an unknown team named", () => {
  const teams = { billing: { TopicArn: 'arn:b' }, security: { TopicArn: 'arn:s', HighPriorityTopicArn: 'arn:s-high' } };
  expect(teamTopicsOf({ Teams: JSON.stringify(teams) }, 'security', 'p')).toEqual(teams.security);
  expect(teamTopicsOf({ Teams: teams }, 'billing', 'p')).toEqual({ TopicArn: 'arn:b' });
  expect(() => teamTopicsOf({ Teams: teams }, 'ops', 'the local pipeline')).toThrow(
    new OperationError('the local pipeline has no team ops: its teams are billing, security'),
  );
  expect(() => teamTopicsOf({}, 'ops', 'p')).toThrow('p has no team ops: it has no teams');
  expect(() => teamTopicsOf({ Teams: '{not json' }, 'ops', 'p')).toThrow('it has no teams');
});

test("a team's own status and cancel URLs come with its topics when the outputs name them", () => {
  const teams = {
    billing: { TopicArn: 'arn:b', StatusUrl: 'https://s/deliveries/', CancelUrl: 'https://c/deliveries/' },
  };
  expect(teamTopicsOf({ Teams: JSON.stringify(teams) }, 'billing', 'p')).toEqual(teams.billing);
});
