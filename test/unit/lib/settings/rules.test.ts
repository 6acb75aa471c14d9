/** The rules settings share: the error they throw, and which configured addresses are refused. */
import { configuredAddressProblem, domainOf, SettingsError } from '../../../../lib/settings';

test('a SettingsError names the setting, its value and the rule', () => {
  const error = new SettingsError('maxSendRate', 0, 'must be at least 1');
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe('SettingsError');
  expect(error.message).toBe('Invalid setting maxSendRate=0: must be at least 1');
});

test('domainOf is the part after the last @, lower-cased', () => {
  expect(domainOf('Ada@Example.COM')).toBe('example.com');
  expect(domainOf('"a@b"@mail.example.org')).toBe('mail.example.org');
});

test('a bare address as SES takes it is accepted', () => {
  expect(configuredAddressProblem('noreply@example.com')).toBeUndefined();
});

test.each([
  [42, 'must be an email address'],
  ['not an address', 'must be an email address'],
  ['Shop <noreply@example.com>', 'without a display name'],
  ['noreply@bücher.example', 'punycode'],
  ['*@example.com', 'wildcards'],
  ['no?reply@example.com', 'wildcards'],
])('%j is refused: %s', (value, reason) => {
  expect(configuredAddressProblem(value)).toContain(reason);
});
