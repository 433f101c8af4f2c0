import { BridgeError } from '../errors.js';
import type { DeletedWebhook, Webhook } from './types.js';

/**
 * The schema checkers, and one schema per resource that is not polled (the polled records' schemas
 * are in their streams' descriptions, src/streams/). Each keeps unknown fields but insists on what
 * the daemon relies on: integer ids, objects where objects belong, integer-or-null flags (checked
 * after normalization, so "0"/"1" have become integers already). What the spec marks "not shown" or
 * nullable stays unconstrained: a stricter schema would stop the poll over a field nobody reads.
 *
 * Why not zod: a 100,000-student list is 300,000 objects; zod's copying parse took 1.3 s of main
 * thread for it, these checkers take a few ms (bench/client.ts). They allocate only on failure.
 */
interface Failure {
  /** Path below the checked value, filled in while unwinding. */
  parts: PropertyKey[];
  expected: string;
  value: unknown;
}

/** Returns undefined when `value` fits; `T` is the type a fitting value has (for `validate`). */
export type Schema<T = unknown> = ((value: unknown) => Failure | undefined) & { readonly __fits?: T };

const fail = (expected: string, value: unknown): Failure => ({ parts: [], expected, value });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const integer: Schema = (v) => (Number.isSafeInteger(v) ? undefined : fail('integer', v));
export const string: Schema = (v) => (typeof v === 'string' ? undefined : fail('string', v));
export const boolean: Schema = (v) => (typeof v === 'boolean' ? undefined : fail('boolean', v));
export const optional = (schema: Schema): Schema => (v) => (v === undefined ? undefined : schema(v));

export const nullable = (schema: Schema): Schema => (v) => {
  if (v === null) return undefined;
  const failure = schema(v);
  if (failure && failure.parts.length === 0) failure.expected = `${failure.expected} or null`;
  return failure;
};

/** A loose object: the listed fields are checked, others are kept as they are. */
export function object<T = unknown>(fields: Record<string, Schema> | (() => Record<string, Schema>)): Schema<T> {
  let entries: [string, Schema][] | undefined;
  return (v) => {
    if (!isPlainObject(v)) return fail('object', v);
    entries ??= Object.entries(typeof fields === 'function' ? fields() : fields); // lazy: schemas may be recursive
    for (const [key, schema] of entries) {
      const failure = schema(v[key]);
      if (failure) {
        failure.parts.unshift(key);
        return failure;
      }
    }
    return undefined;
  };
}

export function arrayOf(schema: Schema): Schema {
  return (v) => {
    if (!Array.isArray(v)) return fail('array', v);
    for (let i = 0; i < v.length; i++) {
      const failure = schema(v[i]);
      if (failure) {
        failure.parts.unshift(i);
        return failure;
      }
    }
    return undefined;
  };
}

/** The schemas of polled records are in their streams' descriptions (src/streams/). */
export const webhookSchema: Schema<Webhook> = object({ id: integer, event: string, callbackUrl: string });
export const deletedWebhookSchema: Schema<DeletedWebhook> = object({ id: integer, isDeleted: optional(boolean) });

/** The JSON type of a value as a reader of the error would name it (never the value: it may be personal data). */
export function describeType(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'non-integer number';
  return typeof value;
}

/** `data.students[3].user.id` from a base path and a relative one. */
export function joinPath(base: string, parts: readonly PropertyKey[]): string {
  let out = base;
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

export function invalidResponse(path: string, expected: string, actual: unknown): BridgeError {
  const got = describeType(actual);
  return new BridgeError('upstream.invalid_response', `upstream answer does not fit API v2 at ${path}: expected ${expected}, got ${got}`, {
    retryable: false,
    context: { path, expected, actual: got },
  });
}

/** Checks `value` against `schema`; a mismatch throws upstream.invalid_response naming the JSON path. */
export function validate<T>(schema: Schema<T>, value: unknown, basePath: string): T {
  const failure = schema(value);
  if (failure) throw invalidResponse(joinPath(basePath, failure.parts), failure.expected, failure.value);
  return value as T;
}
