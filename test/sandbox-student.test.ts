import { describe, expect, it } from 'vitest';
import { SPEC_FIELDS } from './support/sandbox.js';
import { call, clock, expectAllNull, expectUser, form, sandbox, STUDENTS, type Json, useSandbox } from './support/sandbox-api.js';

useSandbox();

/** One student: read, created and updated by id. */
describe('GET /api/v2/student?id=N', () => {
  it('returns one student in the list shape', async () => {
    const expected = sandbox.control.students()[3]!;
    const answer = await call('GET', `/api/v2/student?id=${expected.id}`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: { student: expected } });
  });

  it.each([
    ['', 400, { code: 'invalidRequest', message: "Request parameter 'id' is missing" }],
    ['?id=abc', 400, { code: 'invalidRequest', message: "Request parameter 'id' is invalid" }],
    ['?id=999999', 404, { code: 'notFound', message: 'Student was not found' }],
  ])('%s → %i in the nested shape', async (query, status, error) => {
    const answer = await call('GET', `/api/v2/student${query}`);
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual({ error });
  });
});

describe('POST /api/v2/student', () => {
  it('creates a student with a student user and a parent user: string flags, both one-time passwords', async () => {
    clock.set(Date.UTC(2026, 10, 22, 10, 30, 15));
    const answer = await call('POST', '/api/v2/student', { body: form({ firstname: 'Łucja', lastname: 'Wąsik', email: 'lucja.wasik@poczta.fm', schoolId: '1' }) });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json!.data)).toEqual(['student']);
    const student = answer.json!.data.student as Json;
    expect(Object.keys(student)).toEqual([...SPEC_FIELDS.student]);
    expect(student.isAdult).toBe('0');
    expect(student.isActive).toBe('1');
    expect(student.createdAt).toBe('2026-11-22 11:30:15'); // Europe/Warsaw wall-clock time
    const user = student.user as Json;
    expectUser(user, 'student', 'string');
    expect(user).toMatchObject({ firstName: 'Łucja', lastName: 'Wąsik', fullname: 'Łucja Wąsik', isArchived: '0' });
    expect(user.additionalData.email).toBe('lucja.wasik@poczta.fm');
    expect(user.oneTimePassword).toEqual(expect.any(String));
    expect(user.oneTimePassword.length).toBeGreaterThan(5);
    const parent = user.parentUser as Json;
    expectUser(parent, 'parent', 'string');
    expect(parent.isArchived).toBe('0');
    expect(parent.parentUser).toBeNull();
    expectAllNull(parent.additionalData);
    expect(parent.oneTimePassword).toEqual(expect.any(String));
    expect(parent.oneTimePassword).not.toBe(user.oneTimePassword);

    // The list then shows it with integer flags and no passwords.
    const listed = (await call('GET', '/api/v2/students')).json!.data.students as Json[];
    const last = listed[listed.length - 1]!;
    expect(last.id).toBe(student.id);
    expect(last).toMatchObject({ isAdult: 0, isActive: 1, user: { isArchived: 0, parentUser: { isArchived: 0 } } });
    expect(JSON.stringify(last)).not.toContain('oneTimePassword');
    const users = (await call('GET', '/api/v2/users')).json!.data.users as Json[];
    expect(users.slice(-2).map((entry) => entry.id)).toEqual([user.id, parent.id]);
  });

  it('takes urlencoded fields too', async () => {
    const answer = await call('POST', '/api/v2/student', { body: new URLSearchParams({ firstname: 'Jan', lastname: 'Kowalski' }) });
    expect(answer.status).toBe(200);
    expect(answer.json!.data.student.user.fullname).toBe('Jan Kowalski');
  });

  it.each([
    [{ lastname: 'Nowak' }, "Request parameter 'firstname' is missing"],
    [{ firstname: 'Anna' }, "Request parameter 'lastname' is missing"],
    [{ firstname: 'Anna', lastname: 'Nowak', email: 'not-an-address' }, "Request parameter 'email' is invalid"],
    [{ firstname: 'Anna', lastname: 'Nowak', schoolId: 'x' }, "Request parameter 'schoolId' is invalid"],
  ])('400 names the field: %j', async (fields, message) => {
    const answer = await call('POST', '/api/v2/student', { body: form(fields) });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'invalidRequest', message } });
    expect(sandbox.control.students()).toHaveLength(STUDENTS);
  });
});

describe('PATCH /api/v2/student?id=N', () => {
  it('updates names and e-mail, bumps updatedAt, answers the write shape', async () => {
    const before = sandbox.control.students()[0]!;
    clock.set(Date.UTC(2026, 10, 23, 8, 0, 0));
    const answer = await call('PATCH', `/api/v2/student?id=${before.id}`, { body: form({ lastname: 'Nowak-Żółć', email: 'nowa@wp.pl' }) });
    expect(answer.status).toBe(200);
    const student = answer.json!.data.student as Json;
    expect(student.updatedAt).toBe('2026-11-23 09:00:00');
    expect(student.isActive).toBe(String(before.isActive));
    expect(student.user).toMatchObject({ lastName: 'Nowak-Żółć', firstName: before.user.firstName, fullname: `${before.user.firstName} Nowak-Żółć` });
    expect(student.user.additionalData.email).toBe('nowa@wp.pl');
    expect(student.user.oneTimePassword).toEqual(expect.any(String));
    expect(student.user.parentUser.oneTimePassword).toEqual(expect.any(String));
    expect(sandbox.control.student(before.id)!.user.updatedAt).toBe('2026-11-23 09:00:00');
  });

  it.each([
    ['', 400, "Request parameter 'id' is missing"],
    ['?id=x', 400, "Request parameter 'id' is invalid"],
    ['?id=424242', 404, 'Student was not found'],
  ])('PATCH %s → %i', async (query, status, message) => {
    const answer = await call('PATCH', `/api/v2/student${query}`, { body: form({ firstname: 'Ewa' }) });
    expect(answer.status).toBe(status);
    expect(answer.json!.error.message).toBe(message);
  });
});
