/**
 * JSON's structural characters, as code units (the same numbers as their UTF-8 bytes: all are ASCII,
 * and no byte of a multi-byte UTF-8 character is below 0x80, so scanning text or bytes is alike).
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const MINUS = 0x2d;

/** Space, line feed, carriage return, tab: JSON's only whitespace. */
export function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** A number token starts with a minus or a digit. */
export function startsNumber(c: number): boolean {
  return c === MINUS || isDigit(c);
}
