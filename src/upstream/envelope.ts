import { invalidJson, tooLarge } from './errors.js';
import type { BodyStream } from './http.js';
import { invalidResponse, joinPath } from './schemas.js';

/**
 * Reading the small answers (one student, webhooks, a token) whole, and finding the value under
 * the `data` envelope. Lists of people go through read-list.ts instead.
 */
const SMALL_BODY_LIMIT = 32 * 1024 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true });

export async function readJson(body: BodyStream): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > SMALL_BODY_LIMIT) throw tooLarge(SMALL_BODY_LIMIT);
    parts.push(buffer);
  }
  let text: string;
  try {
    text = decoder.decode(Buffer.concat(parts));
  } catch (error) {
    throw invalidJson('invalid UTF-8', error);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidJson((error as Error).message, error);
  }
}

function typeMatches(value: unknown, expected: 'object' | 'array'): boolean {
  if (expected === 'array') return Array.isArray(value);
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` (e.g. ['data', 'student']); each step must be an object, the last `expected`. */
export function pick(root: unknown, path: readonly string[], expected: 'object' | 'array'): unknown {
  if (!typeMatches(root, 'object')) throw invalidResponse('(body)', 'object', root);
  let current = root as Record<string, unknown>;
  for (let depth = 0; depth < path.length; depth++) {
    const key = path[depth] as string;
    const value = current[key];
    const last = depth === path.length - 1;
    const want = last ? expected : 'object';
    if (!typeMatches(value, want)) throw invalidResponse(joinPath('', path.slice(0, depth + 1)), want, value);
    if (last) return value;
    current = value as Record<string, unknown>;
  }
  return current;
}
