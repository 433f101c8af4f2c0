import { JsonNumber } from './json-number.js';
import { RawJson } from './raw-json.js';

/**
 * `JSON.stringify` for values that may hold JsonNumbers (written as their literal) and RawJson
 * (copied as it is); everything else as `JSON.stringify` writes it: `toJSON` is called, undefined
 * and functions are left out of objects and are `null` in arrays, non-finite numbers are `null`.
 */
export function stringifyExact(value: unknown): string {
  // A look through the value is far cheaper than writing it here: plain values go to JSON.stringify.
  return (holdsExact(value, 0) ? write(value) : JSON.stringify(value)) ?? 'null';
}

/** Whether a JsonNumber or RawJson is anywhere in the value (deeper than any JSON text nests, it says yes). */
function holdsExact(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof JsonNumber || value instanceof RawJson || depth > 100) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsExact(value[i], depth + 1)) return true;
    return false;
  }
  for (const key in value) if (Object.hasOwn(value, key) && holdsExact((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

function write(value: unknown): string | undefined {
  if (value instanceof JsonNumber) return value.literal;
  if (value instanceof RawJson) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + (write(value[i]) ?? 'null');
    return `${text}]`;
  }
  let text = '{';
  for (const key of Object.keys(value)) {
    const item = write((value as Record<string, unknown>)[key]);
    if (item !== undefined) text += (text.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + item;
  }
  return `${text}}`;
}
