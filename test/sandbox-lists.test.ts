import { describe, expect, it } from 'vitest';
import { createSandbox } from '../sandbox/index.js';
import { SPEC_FIELDS } from './support/sandbox.js';
import { call, clock, DATE_TIME, expectAscending, expectUser, sandbox, STUDENTS, type Json, useSandbox } from './support/sandbox-api.js';

useSandbox();

/** The lists a client reads (students, users), and a route the API does not have. */
describe('GET /api/v2/students', () => {
  it('lists every student ascending, integer flags, user with parentUser and its additionalData', async () => {
    const answer = await call('GET', '/api/v2/students');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(answer.json!)).toEqual(['data']);
    expect(Object.keys(answer.json!.data)).toEqual(['students']);
    const students = answer.json!.data.students as Json[];
    expect(students).toHaveLength(STUDENTS);
    expectAscending(students);
    for (const student of students) {
      expect(Object.keys(student)).toEqual([...SPEC_FIELDS.student]);
      expect([0, 1]).toContain(student.isAdult);
      expect([0, 1]).toContain(student.isActive);
      expect(student.createdAt).toMatch(DATE_TIME);
      expect(student.updatedAt).toMatch(DATE_TIME);
      expectUser(student.user, 'student', 'int');
      expect(student.user).not.toHaveProperty('oneTimePassword');
      const parent = student.user.parentUser as Json;
      expectUser(parent, 'parent', 'int');
      expect(parent.parentUser).toBeNull();
    }
    expect(students).toEqual(sandbox.control.students());
  });

  it('has the messy records of the real service (docs/upstream.md)', async () => {
    const students = (await call('GET', '/api/v2/students')).json!.data.students as Json[];
    const users = students.flatMap((student) => [student.user, student.user.parentUser]) as Json[];
    expect(users.some((user) => / $/.test(user.additionalData.street ?? ''))).toBe(true);
    expect(users.some((user) => / $/.test(user.additionalData.zipCode ?? ''))).toBe(true);
    expect(users.some((user) => user.additionalData.phone === 'ffdfff')).toBe(true);
    expect(users.some((user) => user.systemRole === 'parent' && user.firstName === null && user.lastName === null && user.fullname === null && user.name === null)).toBe(true);
    expect(students.some((student) => student.isActive === 1 && student.user.isArchived === 1)).toBe(true);
    expect(users.some((user) => /[ąćęłńóśźżĄĆĘŁŃÓŚŹŻ]/.test(`${user.fullname} ${user.additionalData.street} ${user.additionalData.city}`))).toBe(true);
  });

  it('is the same for the same seed and differs for another', async () => {
    const again = createSandbox({ students: STUDENTS, seed: 7, clock });
    const other = createSandbox({ students: STUDENTS, seed: 8, clock });
    try {
      expect(again.control.students()).toEqual(sandbox.control.students());
      expect(other.control.students()).not.toEqual(sandbox.control.students());
    } finally {
      await Promise.all([again.stop(), other.stop()]);
    }
  });
});

describe('GET /api/v2/users', () => {
  it('lists administrators, student and parent users ascending, parentUser null', async () => {
    const answer = await call('GET', '/api/v2/users');
    expect(Object.keys(answer.json!.data)).toEqual(['users']);
    const users = answer.json!.data.users as Json[];
    expectAscending(users);
    expect(users.filter((user) => user.systemRole === 'student')).toHaveLength(STUDENTS);
    expect(users.filter((user) => user.systemRole === 'parent')).toHaveLength(STUDENTS);
    expect(users.filter((user) => user.systemRole === 'administrator').length).toBeGreaterThan(0);
    for (const user of users) {
      expectUser(user, ['student', 'parent', 'administrator'], 'int');
      expect(user.parentUser).toBeNull();
      expect(user).not.toHaveProperty('oneTimePassword');
    }
    const students = sandbox.control.students();
    const byId = new Map(users.map((user) => [user.id, user]));
    for (const student of students) {
      expect(byId.get(student.user.id)).toEqual({ ...student.user, parentUser: null });
      expect(byId.get(student.user.parentUser!.id)).toEqual(student.user.parentUser);
    }
  });
});

describe('unknown routes', () => {
  it('answer 404 in the nested shape', async () => {
    const answer = await call('GET', '/api/v2/lessons');
    expect(answer.status).toBe(404);
    expect(answer.json!.error.code).toBe('notFound');
  });
});
