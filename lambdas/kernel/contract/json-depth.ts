/**
 * How deep JSON nests, found without recursion: JSON.stringify, Powertools' payload hash and any
 * walk of a parsed body recurse once per level, and a body nested a few thousand levels deep
 * (a few KB) overflows their stack. The contract caps the depth (declaration.ts), checked with these
 * before any of that runs. Pure, no I/O.
 */

/**
 * Where JSON nests objects and arrays deeper than the limit: the object keys that lead to the
 * level past it, as far as the first two levels go (`['template', 'data']`), so the error can name
 * the field; an array on the way ends the path.
 */
export interface TooDeep {
  readonly path: readonly string[];
}

/** How many levels of keys a {@link TooDeep} path keeps. */
const PATH_LEVELS = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** The string literal of `text` at [start, end] (quotes included), decoded; undefined when it is not valid JSON. */
function decodeKey(text: string, start: number, end: number): string | undefined {
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks the nesting of a JSON text in one pass over its characters (string literals skipped), before
 * it is parsed: objects and arrays may nest `max` levels, the outermost counting as one. Not a
 * validator: JSON.parse still judges the syntax of a text this lets through.
 */
export function textTooDeep(text: string, max: number): TooDeep | undefined {
  let depth = 0;
  // Per open level (1-based, the first PATH_LEVELS + 1 only): whether it is an object, and the
  // span of the last string literal directly inside it (in an object, the key of the value that follows).
  const isObject: boolean[] = [];
  const lastString: ([number, number] | undefined)[] = [];
  // The key each of the first levels was opened under (undefined under an array).
  const keySpans: ([number, number] | undefined)[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      for (i += 1; i < text.length && text.charCodeAt(i) !== QUOTE; i += 1) {
        if (text.charCodeAt(i) === BACKSLASH) i += 1;
      }
      if (depth <= PATH_LEVELS) lastString[depth] = [start, i];
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1;
      if (depth <= PATH_LEVELS + 1) {
        keySpans[depth] = depth > 1 && isObject[depth - 1] ? lastString[depth - 1] : undefined;
        isObject[depth] = c === OPEN_OBJECT;
        lastString[depth] = undefined;
      }
      if (depth > max) {
        const path: string[] = [];
        for (let level = 2; level <= Math.min(depth, PATH_LEVELS + 1); level += 1) {
          const span = keySpans[level];
          const key = span && decodeKey(text, span[0], span[1]);
          if (key === undefined) break;
          path.push(key);
        }
        return { path };
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth = Math.max(0, depth - 1);
    }
  }
  return undefined;
}

/**
 * Checks the nesting of a value (a parsed body, or an object a publisher is about to send) with an
 * explicit stack instead of recursion: objects and arrays may nest `max` levels, the value itself
 * counting as one. A cycle nests without end, so it is reported too.
 */
export function valueTooDeep(value: unknown, max: number): TooDeep | undefined {
  const stack: { readonly value: unknown; readonly depth: number; readonly path: readonly string[] }[] = [
    { value, depth: 1, path: [] },
  ];
  // The deepest level each object was seen at: an object shared by several parents is walked again
  // only when met deeper, so each is walked at most `max` times.
  const deepest = new Map<object, number>();
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const current = entry.value;
    if (typeof current !== 'object' || current === null) continue;
    if (entry.depth > max) return { path: entry.path };
    if ((deepest.get(current) ?? 0) >= entry.depth) continue;
    deepest.set(current, entry.depth);
    const keyed = !Array.isArray(current);
    // An array ends the path, as in textTooDeep.
    const open = keyed && entry.path.length === entry.depth - 1 && entry.depth <= PATH_LEVELS;
    for (const [key, child] of Object.entries(current)) {
      if (typeof child === 'object' && child !== null) {
        stack.push({ value: child, depth: entry.depth + 1, path: open ? [...entry.path, key] : entry.path });
      }
    }
  }
  return undefined;
}
