import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { testClock, type TestClock } from './support/clock.js';
import { SPEC_FIELDS } from './support/sandbox.js';

/**
 * The sandbox's API v2 over real HTTP, shape by shape against the tables of docs/upstream.md (SPEC_FIELDS is
 * written from the document) and the quirks it lists.
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const STUDENTS = 40;

let sandbox: Sandbox;
let clock: TestClock;
let token: string;

type Json = Record<string, any>;

async function call(method: string, path: string, init: { body?: RequestInit['body']; token?: string | null; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  const bearer = init.token === undefined ? token : init.token;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  const response = await fetch(`${sandbox.url}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? (JSON.parse(text) as Json) : undefined };
}

function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) data.set(key, value);
  return data;
}

function expectUser(user: Json, role: string | string[], flags: 'int' | 'string'): void {
  expect(Object.keys(user)).toEqual(expect.arrayContaining([...SPEC_FIELDS.user]));
  expect(typeof user.id).toBe('number');
  expect(typeof user.login).toBe('string');
  expect(user.login.length).toBeGreaterThan(0);
  expect([role].flat()).toContain(user.systemRole);
  for (const key of ['name', 'firstName', 'lastName', 'fullname']) expect(user[key] === null || typeof user[key] === 'string').toBe(true);
  expect(flags === 'int' ? [0, 1] : ['0', '1']).toContain(user.isArchived);
  expect(user.photo).toBeNull();
  expect(user.language).toMatch(/^[a-z]{2}_[A-Z]{2}$/);
  expect([0, 1, null]).toContain(user.tosAccepted);
  expect(user.type === null || Number.isInteger(user.type)).toBe(true);
  if (user.type === 0) expect(user.typeName).toBe('normal');
  if (user.createdAt !== null) expect(user.createdAt).toMatch(DATE_TIME);
  expect(user.updatedAt).toMatch(DATE_TIME);
  expectAdditionalData(user.additionalData);
}

function expectAdditionalData(data: Json): void {
  expect(Object.keys(data)).toEqual([...SPEC_FIELDS.additionalData]);
  for (const key of SPEC_FIELDS.alwaysNull) expect(data[key]).toBeNull();
  expect(data.id === null || Number.isInteger(data.id)).toBe(true);
  for (const key of ['phone', 'mobile', 'email', 'skype', 'street', 'zipCode', 'city']) {
    expect(data[key] === null || typeof data[key] === 'string').toBe(true);
  }
}

function expectAllNull(data: Json): void {
  expect(Object.keys(data)).toEqual([...SPEC_FIELDS.additionalData]);
  for (const key of SPEC_FIELDS.additionalData) expect(data[key], key).toBeNull();
}

function expectAscending(items: Json[]): void {
  for (let i = 1; i < items.length; i++) expect(items[i]!.id).toBeGreaterThan(items[i - 1]!.id);
}

beforeEach(async () => {
  clock = testClock(Date.UTC(2026, 10, 22, 9, 0, 0));
  sandbox = createSandbox({ students: STUDENTS, seed: 7, clock, staticToken: 'static-token' });
  await sandbox.start();
  token = sandbox.control.issueToken().access_token;
});

afterEach(async () => {
  await sandbox.stop();
});

describe('POST /api/v2/authorize', () => {
  const basic = `Basic ${Buffer.from('sandbox-client:sandbox-secret').toString('base64')}`;

  it.each([
    ['urlencoded', () => new URLSearchParams({ grant_type: 'client_credentials' })],
    ['multipart', () => form({ grant_type: 'client_credentials' })],
  ])('issues a token for HTTP Basic credentials and a %s grant', async (_kind, body) => {
    const answer = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: body() });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json!).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(answer.json).toMatchObject({ expires_in: 2592000, token_type: 'Bearer', scope: 'administrator' });
    expect((await call('GET', '/api/v2/webhooks', { token: answer.json!.access_token })).status).toBe(200);
  });

  it('accepts credentials as form fields too', async () => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 'sandbox-secret' });
    expect((await call('POST', '/api/v2/authorize', { token: null, body })).status).toBe(200);
  });

  it('answers 400 invalid_client to bad credentials, in the flat OAuth shape', async () => {
    const wrong = `Basic ${Buffer.from('sandbox-client:nope').toString('base64')}`;
    const answer = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: wrong }, body: new URLSearchParams({ grant_type: 'client_credentials' }) });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('answers 400 to a missing or unsupported grant type', async () => {
    const missing = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: new URLSearchParams({}) });
    expect(missing.status).toBe(400);
    expect(missing.json!.error).toBe('invalid_request');
    const other = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: new URLSearchParams({ grant_type: 'password' }) });
    expect(other.json!.error).toBe('unsupported_grant_type');
  });
});

describe('bearer tokens', () => {
  it('rejects a missing or unknown token with 401 in the flat OAuth shape', async () => {
    for (const bearer of [null, 'not-a-token']) {
      const answer = await call('GET', '/api/v2/students', { token: bearer });
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
  });

  it('expires a token after its lifetime', async () => {
    const short = sandbox.control.issueToken(60).access_token;
    expect((await call('GET', '/api/v2/webhooks', { token: short })).status).toBe(200);
    clock.advance(60_000);
    const answer = await call('GET', '/api/v2/webhooks', { token: short });
    expect(answer.status).toBe(401);
    expect(answer.json!.error_description).toMatch(/expired/);
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(200);
  });

  it('expireTokens() makes every issued token fail', async () => {
    sandbox.control.expireTokens();
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(401);
  });

  it('revokeTokens() makes old tokens (the static one too) fail, new ones work', async () => {
    expect((await call('GET', '/api/v2/webhooks', { token: 'static-token' })).status).toBe(200);
    sandbox.control.revokeTokens();
    const old = await call('GET', '/api/v2/webhooks');
    expect(old.status).toBe(401);
    expect(old.json!.error_description).toMatch(/revoked/);
    expect((await call('GET', '/api/v2/webhooks', { token: 'static-token' })).status).toBe(401);
    token = sandbox.control.issueToken().access_token;
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(200);
  });
});

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

describe('webhooks', () => {
  it('registers, lists, deletes (and deleted ones are not listed)', async () => {
    const first = await call('POST', '/api/v2/webhook', { body: form({ event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/hook' }) });
    expect(first.status).toBe(200);
    const webhook = first.json!.data.webhook as Json;
    expect(Object.keys(webhook)).toEqual([...SPEC_FIELDS.webhook]);
    expect(webhook).toMatchObject({ event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/hook' });
    expect(Number.isInteger(webhook.id)).toBe(true);
    expect(webhook.createdAt).toMatch(DATE_TIME);
    const second = await call('POST', '/api/v2/webhook', { body: new URLSearchParams({ event: 'invoice.updated', callbackUrl: 'https://example.test/x' }) });
    expect(second.status).toBe(200);

    expect((await call('GET', '/api/v2/webhooks')).json).toEqual({ data: { webhooks: [webhook, second.json!.data.webhook] } });

    const deleted = await call('DELETE', `/api/v2/webhook?id=${webhook.id}`);
    expect(deleted.status).toBe(200);
    expect(Object.keys(deleted.json!.data.webhook)).toEqual([...SPEC_FIELDS.deletedWebhook]);
    expect(deleted.json!.data.webhook).toMatchObject({ id: webhook.id, isDeleted: true });
    expect(deleted.json!.data.webhook.deletedAt).toMatch(DATE_TIME);
    expect((await call('GET', '/api/v2/webhooks')).json!.data.webhooks).toEqual([second.json!.data.webhook]);
    expect((await call('DELETE', `/api/v2/webhook?id=${webhook.id}`)).status).toBe(404);
  });

  it.each([
    [{ callbackUrl: 'http://127.0.0.1/x' }, 400, "Request parameter 'event' is missing"],
    [{ event: 'invoice', callbackUrl: 'http://127.0.0.1/x' }, 400, "Request parameter 'event' is invalid"],
    [{ event: 'invoice.created' }, 400, "Request parameter 'callbackUrl' is missing"],
    [{ event: 'invoice.created', callbackUrl: 'not a url' }, 400, "Request parameter 'callbackUrl' is invalid"],
  ])('POST %j → %i', async (fields, status, message) => {
    const answer = await call('POST', '/api/v2/webhook', { body: form(fields) });
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual({ error: { code: 'invalidRequest', message } });
  });

  it.each([
    ['', 400],
    ['?id=12345', 404],
  ])('DELETE %s → %i', async (query, status) => {
    expect((await call('DELETE', `/api/v2/webhook${query}`)).status).toBe(status);
  });
});

describe('unknown routes', () => {
  it('answer 404 in the nested shape', async () => {
    const answer = await call('GET', '/api/v2/lessons');
    expect(answer.status).toBe(404);
    expect(answer.json!.error.code).toBe('notFound');
  });
});
