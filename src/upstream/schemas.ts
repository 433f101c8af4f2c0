import { z } from 'zod';
import { BridgeError } from '../errors.js';
import type { DeletedWebhook, Student, User, Webhook } from './types.js';

/**
 * One schema per resource (issue 4). Each keeps unknown fields (looseObject) but insists on what the
 * daemon relies on: integer ids, objects where objects belong, integer-or-null flags (checked after
 * normalization, so "0"/"1" have become integers already). Everything the spec marks "not shown" or
 * nullable stays unconstrained: a stricter schema would stop the poll over a field nobody reads.
 */
const flag = z.number().int().nullable().optional();

const additionalDataSchema = z.looseObject({ id: z.number().int().nullable().optional() });

export const userSchema: z.ZodType<User> = z.looseObject({
  id: z.number().int(),
  isArchived: flag,
  additionalData: additionalDataSchema.nullable().optional(),
  get parentUser() {
    return userSchema.nullable().optional();
  },
}) as unknown as z.ZodType<User>;

export const studentSchema: z.ZodType<Student> = z.looseObject({
  id: z.number().int(),
  isAdult: flag,
  isActive: flag,
  user: userSchema,
}) as unknown as z.ZodType<Student>;

export const webhookSchema: z.ZodType<Webhook> = z.looseObject({
  id: z.number().int(),
  event: z.string(),
  callbackUrl: z.string(),
}) as unknown as z.ZodType<Webhook>;

export const deletedWebhookSchema: z.ZodType<DeletedWebhook> = z.looseObject({
  id: z.number().int(),
  isDeleted: z.boolean().optional(),
}) as unknown as z.ZodType<DeletedWebhook>;

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

function valueAt(value: unknown, parts: readonly PropertyKey[]): unknown {
  let current = value;
  for (const part of parts) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

export function invalidResponse(path: string, expected: string, actual: unknown): BridgeError {
  const got = describeType(actual);
  return new BridgeError('upstream.invalid_response', `upstream answer does not fit API v2 at ${path}: expected ${expected}, got ${got}`, {
    retryable: false,
    context: { path, expected, actual: got },
  });
}

/** Parses `value` with `schema`; a mismatch throws upstream.invalid_response naming the JSON path. */
export function validate<T>(schema: z.ZodType<T>, value: unknown, basePath: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const parts = issue?.path ?? [];
  // Every number this client checks is an integer, so "number" and zod's "int" both read as "integer".
  const named = issue?.code === 'invalid_type' ? String(issue.expected) : (issue?.message ?? 'a valid value');
  const expected = named === 'number' || named === 'int' ? 'integer' : named;
  throw invalidResponse(joinPath(basePath, parts), expected, valueAt(value, parts));
}
