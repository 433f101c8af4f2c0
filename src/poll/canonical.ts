import { createHash } from 'node:crypto';

/**
 * Canonical JSON of a normalized record: object keys sorted at every depth, arrays kept in order,
 * and every non-ASCII character written as a \u escape. Sorted keys make the text depend on the
 * content only (a reordered upstream answer is not a change); the escapes keep the text pure ASCII,
 * which V8 stores one byte per character — Polish names would otherwise double the snapshot's memory.
 * JSON.parse of the result gives back the same values.
 */
export function canonicalJson(value: unknown): string {
  return asciiJson(sortKeysDeep(value));
}

/** JSON.stringify with non-ASCII escaped, for a value whose keys are already sorted. */
export function asciiJson(sorted: unknown): string {
  const text = JSON.stringify(sorted);
  return NON_ASCII.test(text) ? text.replace(NON_ASCII_ALL, escapeChar) : text;
}

const NON_ASCII = /[^\x00-\x7f]/;
const NON_ASCII_ALL = /[^\x00-\x7f]/g;
const escapeChar = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy whose objects have their keys in sorted order (JSON.stringify keeps insertion order). */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = value[key];
    if (item === undefined) continue; // as JSON would drop it
    // A "__proto__" key from JSON is an own property; plain assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: sortKeysDeep(item), enumerable: true, writable: true, configurable: true });
    else out[key] = sortKeysDeep(item);
  }
  return out;
}

/** First 12 hex digits of SHA-256 over the parts, each ended by a NUL so parts cannot run together. */
export function shortHash(...parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 12);
}
