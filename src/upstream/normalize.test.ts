import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractOneTimePasswords, normalizeInPlace, normalizeStudent, normalizeUser, normalizeValue } from './normalize.js';

/** A student as create/update answer it: string flags and one-time passwords (docs/upstream.md). */
function writeAnswerStudent() {
  return {
    id: 7,
    isAdult: '1',
    isActive: '0',
    user: {
      id: 70,
      isArchived: '0',
      oneTimePassword: 'otp-student',
      additionalData: { street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', phone: 'ffdfff' },
      parentUser: { id: 71, isArchived: '1', oneTimePassword: 'otp-parent', firstName: null, parentUser: null },
    },
    unknownField: { nested: ['kept'] },
  };
}

describe('normalizeStudent', () => {
  it('turns "0"/"1" flags into integers at every depth and drops one-time passwords', () => {
    expect(normalizeStudent(writeAnswerStudent())).toEqual({
      id: 7,
      isAdult: 1,
      isActive: 0,
      user: {
        id: 70,
        isArchived: 0,
        additionalData: { street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', phone: 'ffdfff' },
        parentUser: { id: 71, isArchived: 1, firstName: null, parentUser: null },
      },
      unknownField: { nested: ['kept'] },
    });
  });

  it('does not modify its input', () => {
    const input = writeAnswerStudent();
    const copy = structuredClone(input);
    normalizeStudent(input);
    expect(input).toEqual(copy);
  });

  it.each([
    ['integer flag', { isActive: 1 }, { isActive: 1 }],
    ['null flag', { isActive: null }, { isActive: null }],
    ['other string is not "fixed"', { isActive: 'yes' }, { isActive: 'yes' }],
    ['"1" outside a flag stays a string', { phone: '1' }, { phone: '1' }],
    ['padded flag is not trimmed', { isArchived: ' 1' }, { isArchived: ' 1' }],
  ])('%s', (_name, input, expected) => {
    expect(normalizeUser(input)).toEqual(expected);
  });

  it('leaves no oneTimePassword anywhere and is idempotent', () => {
    const arbitrary = fc.letrec((tie) => ({
      node: fc.dictionary(
        fc.constantFrom('id', 'isAdult', 'isActive', 'isArchived', 'oneTimePassword', 'user', 'parentUser', 'x'),
        fc.oneof(fc.constantFrom('0', '1', 0, 1, null, 'otp'), tie('node'), fc.array(tie('node'), { maxLength: 2 })),
        { maxKeys: 5 },
      ),
    })).node;
    fc.assert(
      fc.property(arbitrary, (value) => {
        const once = normalizeValue(value);
        expect(JSON.stringify(once)).not.toContain('oneTimePassword');
        expect(JSON.stringify(once)).not.toMatch(/"is(Adult|Active|Archived)":"[01]"/);
        expect(normalizeValue(once)).toEqual(once);
      }),
    );
  });
});

describe('extractOneTimePasswords', () => {
  it('reads both passwords from a raw answer', () => {
    expect(extractOneTimePasswords(writeAnswerStudent())).toEqual({ student: 'otp-student', parent: 'otp-parent' });
  });
  it.each([[null], [{}], [{ user: null }], [{ user: { parentUser: null } }], [{ user: { oneTimePassword: 5 } }]])(
    'tolerates %j',
    (raw) => {
      expect(extractOneTimePasswords(raw)).toEqual({});
    },
  );
});

/** The normalizer as it was before it walked keys with for…in: the same values and the same count. */
function earlier(value: unknown, changes: { count: number }): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = earlier(value[i], changes);
    return value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const field = record[key];
    if (key === 'oneTimePassword') {
      delete record[key];
      changes.count += 1;
    } else if (['isAdult', 'isActive', 'isArchived'].includes(key) && (field === '0' || field === '1')) {
      record[key] = field === '1' ? 1 : 0;
      changes.count += 1;
    } else if (typeof field === 'object' && field !== null) earlier(field, changes);
  }
  return value;
}

describe('normalizeInPlace', () => {
  it('changes and counts exactly what the earlier normalizer did (list texts are kept on a count of 0)', () => {
    const arbitrary = fc.letrec((tie) => ({
      node: fc.dictionary(
        fc.oneof(fc.constantFrom('id', 'isAdult', 'isActive', 'isArchived', 'oneTimePassword', 'user', '__proto__'), fc.string()),
        fc.oneof(fc.constantFrom('0', '1', 0, 1, null, 'otp', true), fc.jsonValue({ maxDepth: 2 }), tie('node'), fc.array(tie('node'), { maxLength: 2 })),
        { maxKeys: 6 },
      ),
    })).node;
    fc.assert(
      fc.property(arbitrary, (value) => {
        const text = JSON.stringify(value);
        const ours = { count: 0 };
        const theirs = { count: 0 };
        expect(JSON.stringify(normalizeInPlace(JSON.parse(text), ours))).toBe(JSON.stringify(earlier(JSON.parse(text), theirs)));
        expect(ours.count).toBe(theirs.count);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same result as the copying normalizer', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('0', '1', 'x'), (value, flag) => {
        const withFlags = { isActive: flag, user: { isArchived: flag, oneTimePassword: 'p', data: value } };
        expect(normalizeInPlace(structuredClone(withFlags))).toEqual(normalizeValue(withFlags));
      }),
    );
  });
});
