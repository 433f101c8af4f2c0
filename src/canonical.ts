import { hash } from 'node:crypto';

/**
 * The canonical text of a JSON value: object keys sorted (by UTF-16 code units) at every depth,
 * arrays in order, no whitespace. The same content gives the same text however its keys were
 * ordered, so its hash identifies the content: change ids and roster ids rest on it, and are
 * stored, so this text must never change for a given value. Webhook event identities are hashed
 * from their text instead (src/json/canonical-scan.ts), which writes this same text for every value
 * whose numbers are written as JavaScript writes them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Built with += rather than arrays joined: it runs once per webhook delivery and per compared leaf.
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const item = record[keys[i]!];
    if (item === undefined || typeof item === 'function') continue; // as JSON would drop it
    text += (text.length === 1 ? '' : ',') + JSON.stringify(keys[i]) + ':' + canonicalJson(item);
  }
  return `${text}}`;
}

/** One-shot `crypto.hash`: about half the time of createHash().update().digest() for short texts. */
export function sha256Hex(text: string | Uint8Array): string {
  return hash('sha256', text, 'hex');
}

/** First 12 hex digits of SHA-256 over the parts, each ended by a NUL so parts cannot run together. */
export function shortHash(...parts: readonly string[]): string {
  // One-shot over the joined text: the same digest as updating part by part, a third cheaper.
  return hash('sha256', parts.length === 0 ? '' : `${parts.join('\0')}\0`, 'hex').slice(0, 12);
}
