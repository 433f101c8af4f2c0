import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { testClock, type TestClock } from './support/clock.js';
import { startReceiver } from './support/sandbox.js';

/** The `/_sandbox/` control API over HTTP, and the faults it injects into API routes. */
let sandbox: Sandbox;
let clock: TestClock;
let token: string;
type Json = Record<string, any>;

beforeEach(async () => {
  clock = testClock(Date.UTC(2026, 10, 22, 9, 0, 0));
  sandbox = createSandbox({ students: 10, clock, retryTimeScale: 0.0001 });
  await sandbox.start();
  token = sandbox.control.issueToken().access_token;
});

afterEach(async () => {
  await sandbox.stop();
});

async function api(path: string, init: RequestInit = {}) {
  return fetch(`${sandbox.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });
}

async function control(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${sandbox.url}/_sandbox${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

async function listStudents(): Promise<Json[]> {
  return ((await (await api('/api/v2/students')).json()) as Json).data.students;
}

describe('control API: students and users', () => {
  it('renames a student: the list shows it and updatedAt moves', async () => {
    const [first] = await listStudents();
    clock.set(Date.UTC(2026, 11, 1, 12, 0, 0));
    const answer = await control('PATCH', `/students/${first!.id}`, { lastName: 'Źdźbło', city: 'Łódź' });
    expect(answer.status).toBe(200);
    const [after] = await listStudents();
    expect(after!.user).toMatchObject({ lastName: 'Źdźbło', fullname: `${first!.user.firstName} Źdźbło`, updatedAt: '2026-12-01 13:00:00' });
    expect(after!.user.additionalData.city).toBe('Łódź');
    expect(after!.updatedAt).toBe('2026-12-01 13:00:00');
    expect(after!.user.parentUser).toEqual(first!.user.parentUser);
  });

  it('archives a student and a user', async () => {
    const students = await listStudents();
    const target = students.find((student) => student.isActive === 1 && student.user.isArchived === 0)!;
    expect((await control('POST', `/students/${target.id}/archive`)).status).toBe(200);
    const archived = (await listStudents()).find((student) => student.id === target.id)!;
    expect(archived).toMatchObject({ isActive: 0, user: { isArchived: 1 } });
    const parentId = target.user.parentUser.id;
    expect((await control('POST', `/users/${parentId}/archive`)).json).toMatchObject({ id: parentId, isArchived: 1 });
    const users = ((await (await api('/api/v2/users')).json()) as Json).data.users as Json[];
    expect(users.find((user) => user.id === parentId)!.isArchived).toBe(1);
  });

  it('deletes a student (with its user) and a parent user (unlinked from its child)', async () => {
    const [first, second] = await listStudents();
    expect((await control('DELETE', `/students/${first!.id}`)).status).toBe(200);
    const parentId = second!.user.parentUser.id;
    expect((await control('DELETE', `/users/${parentId}`)).status).toBe(200);
    const students = await listStudents();
    expect(students.map((student) => student.id)).not.toContain(first!.id);
    expect(students.find((student) => student.id === second!.id)!.user.parentUser).toBeNull();
    const userIds = (((await (await api('/api/v2/users')).json()) as Json).data.users as Json[]).map((user) => user.id);
    expect(userIds).not.toContain(first!.user.id);
    expect(userIds).toContain(first!.user.parentUser.id);
    expect(userIds).not.toContain(parentId);
    expect((await control('DELETE', `/students/${first!.id}`)).status).toBe(404);
  });

  it('creates a realistic student when given nothing, and validates bodies', async () => {
    const created = await control('POST', '/students', {});
    expect(created.status).toBe(200);
    expect(created.json.user.fullname).toEqual(expect.any(String));
    expect(created.json.user.parentUser.systemRole).toBe('parent');
    const students = await listStudents();
    expect(students[students.length - 1]!.id).toBe(created.json.id);
    const bad = await control('PATCH', `/students/${created.json.id}`, { lastname: 'typo in the key' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalidRequest');
  });
});

describe('control API: invoices, events, tokens, requests', () => {
  it('creates and updates invoices over HTTP, firing their events', async () => {
    const receiver = await startReceiver();
    try {
      await api('/api/v2/webhook', { method: 'POST', body: new URLSearchParams({ event: 'invoice.created', callbackUrl: receiver.url }) });
      await api('/api/v2/webhook', { method: 'POST', body: new URLSearchParams({ event: 'invoice.updated', callbackUrl: receiver.url }) });
      const created = await control('POST', '/invoices', { description: 'Opłata za kurs', unknownField: 7 });
      expect(created.json).toMatchObject({ description: 'Opłata za kurs', unknownField: 7 });
      await control('PATCH', `/invoices/${created.json.id}`, { statusOffice: 2 });
      await control('POST', '/events', { event: 'invoice.updated', object: { id: 'anything' } });
      await sandbox.control.idle();
      const events = receiver.received.map((request) => JSON.parse(request.body.toString()).event).sort();
      expect(events).toEqual(['invoice.created', 'invoice.updated', 'invoice.updated']);
      const log = await control('GET', '/deliveries');
      expect(log.json).toHaveLength(3);
      expect((await control('PATCH', '/invoices/999999', {})).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });

  it('issues, expires and revokes tokens', async () => {
    const issued = await control('POST', '/tokens', { ttlSeconds: 100 });
    expect(issued.json).toMatchObject({ expires_in: 100, token_type: 'Bearer' });
    token = issued.json.access_token;
    expect((await api('/api/v2/users')).status).toBe(200);
    await control('POST', '/tokens/expire');
    expect((await api('/api/v2/users')).status).toBe(401);
    token = (await control('POST', '/tokens', {})).json.access_token;
    await control('POST', '/tokens/revoke');
    expect((await api('/api/v2/users')).status).toBe(401);
  });

  it('counts API requests by method and path', async () => {
    await api('/api/v2/students');
    await api('/api/v2/students?x=1');
    await api('/api/v2/users');
    expect(sandbox.control.requestCount('GET', '/api/v2/students')).toBe(2);
    expect(sandbox.control.requestCount('get', '/api/v2/users')).toBe(1);
    expect(sandbox.control.requestCount('POST', '/api/v2/student')).toBe(0);
    expect((await control('GET', '/requests')).json['GET /api/v2/students']).toBe(2);
  });

  it('lists its endpoints', async () => {
    const index = await control('GET', '');
    expect(index.json.endpoints.map((endpoint: Json) => `${endpoint.method} ${endpoint.path}`)).toContain('POST /_sandbox/faults');
  });
});

describe('faults', () => {
  it('answers a status for the next N requests of a route, then recovers', async () => {
    await control('POST', '/faults', { kind: 'status', status: 503, route: 'GET /api/v2/students', times: 2 });
    expect((await api('/api/v2/users')).status).toBe(200);
    const first = await api('/api/v2/students');
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({ error: { code: 'serviceUnavailable', message: expect.any(String) } });
    expect((await api('/api/v2/students')).status).toBe(503);
    expect((await api('/api/v2/students')).status).toBe(200);
  });

  it('answers 403 in the flat OAuth shape', async () => {
    sandbox.control.injectFault({ kind: 'status', status: 403 });
    const answer = await api('/api/v2/webhooks');
    expect(answer.status).toBe(403);
    expect(await answer.json()).toEqual({ error: expect.any(String), error_description: expect.any(String) });
  });

  it('answers 429 with Retry-After', async () => {
    sandbox.control.injectFault({ kind: 'rateLimit', retryAfterSeconds: 1, route: '/api/v2/students' });
    const answer = await api('/api/v2/students');
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(((await answer.json()) as Json).error.code).toBe('tooManyRequests');
  });

  it('sends malformed JSON', async () => {
    sandbox.control.injectFault({ kind: 'malformedJson' });
    const answer = await api('/api/v2/students');
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('sends truncated JSON with a matching Content-Length', async () => {
    const whole = await (await api('/api/v2/students')).text();
    sandbox.control.injectFault({ kind: 'truncatedJson', route: 'GET /api/v2/students' });
    const answer = await api('/api/v2/students');
    const text = await answer.text();
    expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(whole.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(whole.length);
    expect(() => JSON.parse(text)).toThrow();
  });

  it('resets the connection', async () => {
    sandbox.control.injectFault({ kind: 'reset', route: 'GET /api/v2/users' });
    await expect(api('/api/v2/users')).rejects.toThrow();
    expect((await api('/api/v2/users')).status).toBe(200);
  });

  it('answers an empty list', async () => {
    sandbox.control.injectFault({ kind: 'emptyList', times: 'always' });
    for (const [path, key] of [['/api/v2/students', 'students'], ['/api/v2/users', 'users'], ['/api/v2/webhooks', 'webhooks']]) {
      expect(await (await api(path!)).json()).toEqual({ data: { [key!]: [] } });
    }
    sandbox.control.clearFaults();
    expect(await listStudents()).toHaveLength(10);
  });

  it('answers any raw body (a missing data key, a string id)', async () => {
    sandbox.control.injectFault({ kind: 'body', body: { students: [] } });
    sandbox.control.injectFault({ kind: 'body', body: { data: { students: [{ id: '7' }] } } });
    expect(await (await api('/api/v2/students')).json()).toEqual({ students: [] });
    expect(await (await api('/api/v2/students')).json()).toEqual({ data: { students: [{ id: '7' }] } });
  });

  it('adds latency through the sandbox clock', async () => {
    sandbox.control.injectFault({ kind: 'latency', ms: 25, route: 'GET /api/v2/students' });
    expect(await listStudents()).toHaveLength(10);
    expect(clock.slept).toContain(25);
  });

  it('rejects an unknown fault kind with 400 and faults nothing', async () => {
    const answer = await control('POST', '/faults', { kind: 'meteor' });
    expect(answer.status).toBe(400);
    expect((await control('GET', '/faults')).json).toEqual([]);
    await control('POST', '/faults', { kind: 'reset', times: 'always' });
    expect((await control('GET', '/faults')).json).toHaveLength(1);
    await control('DELETE', '/faults');
    expect((await api('/api/v2/students')).status).toBe(200);
  });
});

describe('control API: request counts', () => {
  it('counts requests by route, not by path: one count for every invoice id, one for every path no route answers', async () => {
    const first = await control('POST', '/invoices', {});
    const second = await control('POST', '/invoices', {});
    for (const id of [first.json.id, second.json.id]) await control('PATCH', `/invoices/${id}`, { statusOffice: 1 });
    for (const path of ['/made-up/1', '/made-up/2', '/made-up/3']) await api(path);
    await api('/api/v2/student?id=1');
    const counts = (await control('GET', '/requests')).json as Record<string, number>;
    expect(counts).toMatchObject({ 'PATCH /_sandbox/invoices/:id': 2, 'GET (no route)': 3, 'GET /api/v2/student': 1 });
    expect(Object.keys(counts).filter((key) => /\/\d/.test(key))).toEqual([]);
  });
});
