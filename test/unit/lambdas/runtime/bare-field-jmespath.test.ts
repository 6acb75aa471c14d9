/**
 * The bare-field subset bundled in place of Powertools' JMESPath: for the expressions the
 * idempotency claim names, it answers what the library answers, on every kind of input; any other
 * expression is refused, naming the alias.
 */
import { search as librarySearch } from '@aws-lambda-powertools/jmespath';
import { PowertoolsFunctions as LibraryFunctions } from '@aws-lambda-powertools/jmespath/functions';
import { PowertoolsFunctions, search } from '../../../../lambdas/runtime/bare-field-jmespath';

const inputs: unknown[] = [
  { key: 'order-42', email: { to: ['a@example.com'], subject: 'Hi' } },
  { key: '', email: null },
  { key: 0, email: false },
  { key: null },
  { email: [1, 2] },
  {},
  [],
  ['key'],
  null,
  'key',
  42,
  true,
  { key: { nested: { deeper: [null, 'x'] } } },
  { constructor: 'c', toString: 1 },
];

describe.each(['key', 'email', 'subject', 'missing_1', '_x'])('the bare field %s', (expression) => {
  test.each(inputs.map((input) => [JSON.stringify(input), input]))('on %s answers as the library does', (_, input) => {
    const options = { customFunctions: new LibraryFunctions() };
    expect(search(expression, input)).toStrictEqual(librarySearch(expression, input as never, options));
  });
});

test.each(['key.id', 'email.to[0]', '"key"', 'key || email', '[key]', 'length(key)', '@', '', '1key'])(
  'refuses %j, naming the alias',
  (expression) => {
    expect(() => search(expression, { key: 'k' })).toThrow(/not a bare field name.*lib\/construct\/bundling\.ts/);
  },
);

test('every expression it refuses is one the library parses differently from a field', () => {
  // A refused expression would not be a silent difference: the library evaluates "key.id" to a
  // nested value, which the subset cannot give.
  expect(librarySearch('key.id', { key: { id: 7 } })).toBe(7);
});

test('the custom functions Powertools builds by default can be built', () => {
  expect(new PowertoolsFunctions()).toBeInstanceOf(PowertoolsFunctions);
});
