import { OPEN_ARRAY, OPEN_OBJECT, QUOTE, startsNumber } from './chars.js';
import { JsonCursor, stringValue } from './cursor.js';
import { isUnusualLiteral, JsonNumber, numberOf } from './json-number.js';

/**
 * `JSON.parse`, except that a number whose literal a double cannot give back (an id beyond 2^53,
 * `123.4500`, `1e2`) becomes a JsonNumber holding its literal instead of being rounded. Texts with
 * none of those (nearly all) go to `JSON.parse` itself after one quick look at their numbers.
 */
export function parseExact(text: string): unknown {
  if (!hasUnusualNumber(text)) return JSON.parse(text);
  const cursor = new JsonCursor(text);
  cursor.whitespace();
  const value = readValue(cursor);
  cursor.end();
  return value;
}

/**
 * Whether a valid JSON text holds a number literal that `JSON.parse` would not give back as
 * written. Strings are skipped by their quotes, so digits inside them do not count.
 */
export function hasUnusualNumber(text: string): boolean {
  const cursor = new JsonCursor(text);
  for (let c = cursor.peek(); !Number.isNaN(c); c = cursor.peek()) {
    if (c === QUOTE) cursor.string();
    else if (startsNumber(c)) {
      if (isUnusualLiteral(cursor.number())) return true;
    } else cursor.pos++;
  }
  return false;
}

/** Nesting is bounded by the texts this reads: ones `scanJson` checked before they were stored. */
function readValue(cursor: JsonCursor): unknown {
  const c = cursor.peek();
  if (c === OPEN_OBJECT) {
    const object: Record<string, unknown> = {};
    cursor.container(true, (token, escaped) => {
      const key = stringValue(token, escaped);
      // defineProperty, not assignment: a "__proto__" key is an own property, as with JSON.parse.
      Object.defineProperty(object, key, { value: readValue(cursor), enumerable: true, writable: true, configurable: true });
    });
    return object;
  }
  if (c === OPEN_ARRAY) {
    const array: unknown[] = [];
    cursor.container(false, () => {
      array.push(readValue(cursor));
    });
    return array;
  }
  if (c === QUOTE) {
    const token = cursor.string();
    return stringValue(token, cursor.escaped);
  }
  if (startsNumber(c)) return numberOf(cursor.number());
  const word = cursor.word();
  return word === 'true' ? true : word === 'false' ? false : null;
}

export { JsonNumber };
