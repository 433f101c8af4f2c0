import { BACKSLASH, MINUS, OPEN_ARRAY, OPEN_OBJECT, QUOTE, startsNumber } from './chars.js';
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
 * written. It runs before every parse of a stored record (a roster can be tens of MB), so it only
 * looks: strings are skipped by searching for their closing quote, and an integer of at most 15
 * digits (every one a double holds exactly, as written), other than `-0`, is not converted.
 */
export function hasUnusualNumber(text: string): boolean {
  const end = text.length;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = closingQuote(text, i);
    else if (startsNumber(c)) {
      let j = i + 1;
      let plain = true;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d >= 0x30 && d <= 0x39) j++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === MINUS) {
          plain = false;
          j++;
        } else break;
      }
      const negativeZero = c === MINUS && j - i === 2 && text.charCodeAt(i + 1) === 0x30;
      if ((!plain || j - i > 15 || negativeZero) && isUnusualLiteral(text.slice(i, j))) return true;
      i = j - 1;
    }
  }
  return false;
}

/** The index of the quote that closes the string opening at `open` (one preceded by an even run of backslashes). */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  for (;;) {
    let k = at - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((at - 1 - k) % 2 === 0 || at < 0) return at < 0 ? text.length : at;
    at = text.indexOf('"', at + 1);
  }
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
