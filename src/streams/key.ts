/**
 * A polled record's key: the upstream's id of the record, an integer or a string as the stream's
 * description says (src/streams/). Keys of one stream are all of one type, so comparing them needs
 * no rule across types. The order is the one the store keeps them in: integers by value, strings by
 * their UTF-16 code units, which is bytewise UTF-8 order (the engines' order for a string key)
 * for every text without characters beyond U+FFFF.
 */
export type Key = number | string;
export type KeyType = 'integer' | 'string';

export function compareKeys(a: Key, b: Key): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether `value` is a key of this type: a safe integer, or a non-empty string. */
export function isKey(type: KeyType, value: unknown): value is Key {
  return type === 'integer' ? Number.isSafeInteger(value) : typeof value === 'string' && value.length > 0;
}

/** A key written as text (a record id's middle, a text column) read back as its type. */
export function parseKey(type: KeyType, text: string): Key {
  return type === 'integer' ? Number(text) : text;
}
