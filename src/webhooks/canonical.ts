import { createHash } from 'node:crypto';

/**
 * The canonical text of a JSON value: object keys sorted (by UTF-16 code units) at every depth, no
 * whitespace. Two deliveries of the same object serialize the same however the sender ordered its
 * keys, so the hash of this text identifies the object's content.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

export function sha256Hex(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}
