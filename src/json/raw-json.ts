/**
 * JSON text to be written into a larger JSON text as it is, such as an event's object as received:
 * `stringifyExact` copies it, so its number literals, key order and escapes pass unchanged. The text
 * must be one valid JSON value without line breaks (the canonical scan makes such texts).
 */
export class RawJson {
  constructor(readonly text: string) {}

  /** What `JSON.stringify` writes instead (it cannot copy text): the value, as `JSON.parse` reads it. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
