import { hash } from 'node:crypto';

/**
 * The canonical text of a JSON value: object keys sorted (by UTF-16 code units) at every depth,
 * arrays in order, no whitespace. The same content gives the same text however its keys were
 * ordered, so its hash identifies the content: webhook event identities and change ids rest on it,
 * and both are stored, so this text must never change for a given value.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined || typeof item === 'function') continue; // as JSON would drop it
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(',')}}`;
}

/** One-shot `crypto.hash`: about half the time of createHash().update().digest() for short texts. */
export function sha256Hex(text: string | Uint8Array): string {
  return hash('sha256', text, 'hex');
}
