import { hash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted at every depth, arrays kept in order, so the text depends on the
 * content only. Used where key order must not matter (arrays compared as leaves, the roster hash);
 * snapshot entries use plain JSON.stringify for speed (see diff.ts).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value));
}

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
  // One-shot over the joined text: the same digest as updating part by part, a third cheaper.
  return hash('sha256', parts.length === 0 ? '' : `${parts.join('\0')}\0`, 'hex').slice(0, 12);
}
