/**
 * Normalization of upstream records, in one place (docs/records.md):
 * - the flags isAdult / isActive / isArchived come as the strings "0"/"1" in create and update
 *   answers and as integers elsewhere; we make them integers at any nesting depth, so a student
 *   read back after a write does not look "changed";
 * - `oneTimePassword` (on the student's user and its parentUser) is removed everywhere, so it can
 *   never be stored, logged or delivered. `extractOneTimePasswords` reads them first, for the caller.
 * Nothing else is touched: no trimming, unknown fields kept, other values passed through.
 */
const FLAG_FIELDS = new Set(['isAdult', 'isActive', 'isArchived']);
/** Never stored, logged or delivered: the poll drops it here, the webhook intake in src/webhooks/event-body.ts. */
export const ONE_TIME_PASSWORD_FIELD = 'oneTimePassword';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Normalizes a value the caller owns, in place, and returns it. The client uses this on objects it
 * has just parsed: copying 300,000 objects of a big list cost more main-thread time than parsing.
 * `changes.count` goes up by one per value changed or removed (the list worker keeps a record's text
 * as received when nothing was).
 */
export function normalizeInPlace(value: unknown, changes?: { count: number }): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = normalizeInPlace(value[i], changes);
    return value;
  }
  if (!isPlainObject(value)) return value;
  // for…in, not Object.keys: no array per object, which matters over a big school's list. The values
  // are parsed JSON, so every enumerable key is their own; deleting the current key is allowed.
  for (const key in value) {
    const field = value[key];
    if (key === ONE_TIME_PASSWORD_FIELD) {
      delete value[key];
      if (changes) changes.count += 1;
    } else if (typeof field === 'object') {
      if (field !== null) normalizeInPlace(field, changes);
    } else if ((field === '0' || field === '1') && FLAG_FIELDS.has(key)) {
      value[key] = field === '1' ? 1 : 0;
      if (changes) changes.count += 1;
    }
  }
  return value;
}

/** Returns a normalized deep copy of any JSON value; the input is not modified. */
export function normalizeValue(value: unknown): unknown {
  return normalizeInPlace(structuredClone(value));
}

/** Normalizes one student (its user and parentUser included). Shape is checked by schemas.ts. */
export function normalizeStudent(raw: unknown): unknown {
  return normalizeValue(raw);
}

/** Normalizes one user (its parentUser included). */
export function normalizeUser(raw: unknown): unknown {
  return normalizeValue(raw);
}

/** The one-time passwords of a raw create/update answer's student, before normalization drops them. */
export function extractOneTimePasswords(rawStudent: unknown): { student?: string; parent?: string } {
  const result: { student?: string; parent?: string } = {};
  const user = isPlainObject(rawStudent) ? rawStudent.user : undefined;
  if (!isPlainObject(user)) return result;
  if (typeof user[ONE_TIME_PASSWORD_FIELD] === 'string') result.student = user[ONE_TIME_PASSWORD_FIELD];
  const parent = user.parentUser;
  if (isPlainObject(parent) && typeof parent[ONE_TIME_PASSWORD_FIELD] === 'string') result.parent = parent[ONE_TIME_PASSWORD_FIELD];
  return result;
}
