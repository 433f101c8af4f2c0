import { OPEN_OBJECT } from './chars.js';
import { JsonCursor, stringValue } from './cursor.js';

/**
 * The text of one member's value in a JSON object text, as it is written there (of repeated keys,
 * the last), or undefined when the object has no such member: a stored record's `record` read out
 * of the record's JSON without parsing or writing it again. Other members are skipped, not kept.
 */
export function memberText(json: string, name: string): string | undefined {
  const cursor = new JsonCursor(json);
  cursor.whitespace();
  if (cursor.peek() !== OPEN_OBJECT) return undefined;
  let found: string | undefined;
  cursor.container(true, (token, escaped) => {
    const start = cursor.pos;
    cursor.skipValue(Number.POSITIVE_INFINITY);
    if (stringValue(token, escaped) === name) found = json.slice(start, cursor.pos);
  });
  return found;
}
