import { closest, suggestion } from '../../lib/cli/errors';

test('a typo of one letter, a swap of neighbours or a prefix finds the known word', () => {
  expect(closest('--maxx', ['--max', '--json', '--stack'])).toBe('--max');
  expect(closest('dql', ['dlq', 'publish'])).toBe('dlq');
  expect(closest('lis', ['list', 'redrive', 'purge'])).toBe('list');
  expect(closest('redirve', ['list', 'redrive', 'purge'])).toBe('redrive');
});

test('nothing is suggested for a word unlike any known one', () => {
  expect(closest('deploy', ['dlq', 'publish', 'status'])).toBeUndefined();
  expect(suggestion('deploy', ['dlq', 'publish'])).toBe('');
  expect(suggestion('dlg', ['dlq', 'publish'])).toBe(' (did you mean dlq?)');
});
