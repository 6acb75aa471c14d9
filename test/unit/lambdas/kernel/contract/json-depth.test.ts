/**
 * How deep JSON nests, found without recursion (lambdas/kernel/contract/json-depth.ts): on the text before
 * it is parsed, and on a value before anything serializes it.
 */
import { textTooDeep, valueTooDeep } from '../../../../../lambdas/kernel/contract/json-depth';

/** `levels` arrays, one inside the other. */
function arrays(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

/** `{"k":{"k":...1}}`, `levels` objects deep. */
function objects(levels: number): string {
  return '{"k":'.repeat(levels) + '1' + '}'.repeat(levels);
}

describe('textTooDeep', () => {
  test('JSON nested exactly to the limit passes', () => {
    expect(textTooDeep(objects(32), 32)).toBeUndefined();
  });

  test('JSON nested one level past the limit is found', () => {
    expect(textTooDeep(objects(33), 32)).toBeDefined();
  });

  test('a million levels of arrays are found without overflowing the stack', () => {
    expect(textTooDeep(arrays(1_000_000), 32)).toEqual({ path: [] });
  });

  test('brackets inside strings, escaped quotes included, do not count', () => {
    const text = JSON.stringify({ a: '[[[[{{{{', b: '\\"[[[[', c: ['"]]]]'] });

    expect(textTooDeep(text, 2)).toBeUndefined();
  });

  test('siblings do not add up: depth is the deepest branch, not the number of containers', () => {
    const text = JSON.stringify({ a: [[1]], b: [[2]], c: { d: [3] } });

    expect(textTooDeep(text, 3)).toBeUndefined();
  });

  test('the path names the keys of the first two levels leading to the deepest part', () => {
    const text = JSON.stringify({ to: 'a@example.com', template: { name: 'w', data: { x: { y: { z: {} } } } } });

    expect(textTooDeep(text, 3)).toEqual({ path: ['template', 'data'] });
  });

  test('escaped keys are decoded in the path', () => {
    expect(textTooDeep('{"t\\u0065mplate":{"d\\"":[[[]]]}}', 3)).toEqual({ path: ['template', 'd"'] });
  });

  test('an array on the way ends the path', () => {
    expect(textTooDeep(JSON.stringify({ to: [[[['a']]]] }), 3)).toEqual({ path: ['to'] });
  });
});

describe('valueTooDeep', () => {
  test('a value nested exactly to the limit passes', () => {
    expect(valueTooDeep(JSON.parse(objects(32)), 32)).toBeUndefined();
  });

  test('a value nested one level past the limit is found, with the same path as on its text', () => {
    const text = JSON.stringify({ template: { data: JSON.parse(objects(40)) as unknown } });

    expect(valueTooDeep(JSON.parse(text), 32)).toEqual(textTooDeep(text, 32));
    expect(valueTooDeep(JSON.parse(text), 32)).toEqual({ path: ['template', 'data'] });
  });

  test('a value a hundred thousand levels deep is found without overflowing the stack', () => {
    expect(valueTooDeep(JSON.parse(arrays(100_000)), 32)).toEqual({ path: [] });
  });

  test('a cycle is found as nesting without end', () => {
    const data: Record<string, unknown> = {};
    data.self = data;

    expect(valueTooDeep({ template: { data } }, 32)).toEqual({ path: ['template', 'data'] });
  });

  test('an object shared by many parents is walked once, not once per path to it', () => {
    // 20 levels, each holding the level below twice: 2^20 paths through 20 objects.
    let visits = 0;
    let level: object = {};
    for (let i = 0; i < 20; i += 1) {
      level = new Proxy(
        { a: level, b: level },
        {
          ownKeys(target) {
            visits += 1;
            return Reflect.ownKeys(target);
          },
        },
      );
    }

    expect(valueTooDeep(level, 32)).toBeUndefined();
    expect(visits).toBe(20);
  });

  test('primitives have no depth', () => {
    expect(valueTooDeep('[[[[', 0)).toBeUndefined();
  });
});
