/** Canonical JSON and the short hash of record ids live in src/canonical.ts, shared with the webhook intake. */
export { canonicalJson, shortHash } from '../canonical.js';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
