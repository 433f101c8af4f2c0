import { describe, expect, it } from 'vitest';
import { studentSchema } from '../streams/students.js';
import { userSchema } from '../streams/users.js';
import { describeType, joinPath, validate, webhookSchema } from './schemas.js';
import { thrown as failure } from '../../test/support/errors.js';

function student(overrides: Record<string, unknown> = {}) {
  return { id: 1, isAdult: 0, isActive: 1, user: { id: 10, isArchived: 0, parentUser: { id: 11, parentUser: null } }, ...overrides };
}

describe('schemas', () => {
  it('keeps unknown fields', () => {
    const value = student({ extra: { a: 1 } });
    expect(validate(studentSchema, value, 'data.student')).toEqual(value);
  });

  it('accepts the nullable parts of the spec', () => {
    const value = student({ user: { id: 10, isArchived: null, additionalData: null, parentUser: null, firstName: null } });
    expect(validate(studentSchema, value, 'x')).toEqual(value);
  });

  it.each([
    ['string id', student({ id: '1' }), 'data.students[3].id', 'integer', 'string'],
    ['fractional id', student({ id: 1.5 }), 'data.students[3].id', 'integer', 'non-integer number'],
    ['missing id', { user: { id: 1 } }, 'data.students[3].id', 'integer', 'missing'],
    ['missing user', student({ user: undefined }), 'data.students[3].user', 'object', 'missing'],
    ['user is an array', student({ user: [] }), 'data.students[3].user', 'object', 'array'],
    ['parent id string', student({ user: { id: 10, parentUser: { id: 'x' } } }), 'data.students[3].user.parentUser.id', 'integer', 'string'],
    ['flag left a string', student({ isActive: 'yes' }), 'data.students[3].isActive', 'integer or null', 'string'],
    ['unsafe integer id', student({ id: 2 ** 60 }), 'data.students[3].id', 'integer', 'number'],
    ['element not an object', 5, 'data.students[3]', 'object', 'number'],
  ])('%s is an invalid_response naming the path', (_name, value, path, expected, actual) => {
    const error = failure(() => validate(studentSchema, value, 'data.students[3]'));
    expect(error.code).toBe('upstream.invalid_response');
    expect(error.retryable).toBe(false);
    expect(error.context).toEqual({ path, expected, actual });
    expect(error.message).toContain(path);
  });

  it('checks users and webhooks', () => {
    expect(failure(() => validate(userSchema, { id: null }, 'data.users[0]')).context?.path).toBe('data.users[0].id');
    expect(failure(() => validate(webhookSchema, { id: 1, event: 'a.b' }, 'data.webhook')).context?.path).toBe('data.webhook.callbackUrl');
  });

  it('never puts the offending value in the message', () => {
    const error = failure(() => validate(studentSchema, student({ id: 'jan.kowalski@example.com' }), 'd'));
    expect(error.message).not.toContain('kowalski');
  });

  it.each([
    [[], ''],
    [['data', 'students', 3, 'id'], 'data.students[3].id'],
  ])('joinPath(%j)', (parts, expected) => {
    expect(joinPath('', parts)).toBe(expected);
  });

  it.each([
    [undefined, 'missing'], [null, 'null'], [[], 'array'], [1.5, 'non-integer number'], [2, 'number'], ['s', 'string'], [{}, 'object'],
  ])('describeType(%j) = %s', (value, expected) => {
    expect(describeType(value)).toBe(expected);
  });
});
