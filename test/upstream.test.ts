import { pino } from 'pino';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { createUpstreamClient, type UpstreamClient, type UpstreamClientOptions } from '../src/upstream/index.js';
import { testClock } from './support/clock.js';
import { rejected as failure } from './support/errors.js';

/** The upstream client against the sandbox over loopback. */
const CLIENT_ID = 'bridge-client';
const CLIENT_SECRET = 'bridge-secret';
const STATIC_TOKEN = 'static-token-for-tests';

let sandbox: Sandbox;
let agent: Agent;

beforeAll(async () => {
  sandbox = createSandbox({ students: 30, seed: 7, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, staticToken: STATIC_TOKEN });
  await sandbox.start();
  agent = new Agent({ keepAliveTimeout: 1000 });
});

afterAll(async () => {
  await agent.close();
  await sandbox.stop();
});

afterEach(() => sandbox.control.clearFaults());

function client(overrides: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  return createUpstreamClient({
    baseUrl: sandbox.url,
    auth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    dispatcher: agent,
    clock: testClock(Date.now(), { sleep: 'instant' }),
    log: pino({ level: 'silent' }),
    ...overrides,
  });
}

const authorizeCalls = () => sandbox.control.requestCount('POST', '/api/v2/authorize');

describe('every API v2 operation', () => {
  it('lists students and users exactly as the sandbox holds them', async () => {
    const upstream = client();
    expect(await upstream.list('students')).toEqual(sandbox.control.students());
    expect(await upstream.list('users')).toEqual(sandbox.control.users());
  });

  it('creates, reads and updates a student; passwords only in the write results', async () => {
    const upstream = client();
    const created = await upstream.createStudent({ firstname: 'Ala ', lastname: 'Nowak', email: 'ala@example.com', schoolId: 1 });
    expect(created.oneTimePasswords).toEqual({ student: expect.any(String), parent: expect.any(String) });
    expect(JSON.stringify(created.student)).not.toContain('oneTimePassword');
    expect(created.student).toMatchObject({ isAdult: expect.any(Number), isActive: expect.any(Number) });
    expect(created.student.user).toMatchObject({ firstName: 'Ala ', isArchived: 0 }); // no trimming
    expect(created.student.user.parentUser).toMatchObject({ isArchived: 0 });
    // The write answer, normalized, equals what the list and the single read say afterwards.
    expect(await upstream.getStudent(created.student.id)).toEqual(created.student);
    expect((await upstream.list('students')).find((s) => s.id === created.student.id)).toEqual(created.student);

    const updated = await upstream.updateStudent(created.student.id, { lastname: 'Kowalska' });
    expect(updated.student.user.lastName).toBe('Kowalska');
    expect(updated.student.user.firstName).toBe('Ala '); // fields not given are left alone
    expect(updated.oneTimePasswords.student).toEqual(expect.any(String));
    expect(await upstream.getStudent(created.student.id)).toEqual(updated.student);
  });

  it('sends write bodies urlencoded too', async () => {
    const created = await client({ formEncoding: 'urlencoded' }).createStudent({ firstname: 'Ola', lastname: 'Lis', email: 'o@example.com', schoolId: '2' });
    expect(created.student.user).toMatchObject({ firstName: 'Ola', lastName: 'Lis' });
  });

  it('a missing student is upstream.not_found with the upstream message', async () => {
    const error = await failure(client().getStudent(987654));
    expect(error).toMatchObject({ code: 'upstream.not_found', status: 404 });
    expect(error.message).toContain('Student was not found');
  });

  it('a refused write is upstream.http 400 with the upstream message', async () => {
    const error = await failure(client().createStudent({ firstname: '', lastname: 'X', email: 'x@example.com', schoolId: 1 }));
    expect(error).toMatchObject({ code: 'upstream.http', status: 400, retryable: false });
    expect(error.message).toMatch(/firstname/);
  });

  it('registers, lists and deletes webhooks', async () => {
    const upstream = client();
    const hook = await upstream.registerWebhook('invoice.created', 'http://127.0.0.1:9/webhooks/v2');
    expect(hook).toMatchObject({ id: expect.any(Number), event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/webhooks/v2' });
    expect(await upstream.listWebhooks()).toContainEqual(hook);
    expect(await upstream.deleteWebhook(hook.id)).toMatchObject({ id: hook.id, isDeleted: true });
    expect((await upstream.listWebhooks()).map((w) => w.id)).not.toContain(hook.id);
  });
});

describe('authorization', () => {
  it('caches the token: one authorize for many calls, concurrent or not', async () => {
    const before = authorizeCalls();
    const upstream = client();
    await Promise.all([upstream.listWebhooks(), upstream.listWebhooks(), upstream.list('users'), upstream.getStudent(1)]);
    await upstream.listWebhooks();
    expect(authorizeCalls() - before).toBe(1);
  });

  it('refreshes shortly before expires_in', async () => {
    const clock = testClock(Date.now(), { sleep: 'instant' });
    const upstream = client({ clock });
    const before = authorizeCalls();
    await upstream.listWebhooks();
    clock.advance(2_592_000_000 - 6 * 60_000); // 30 days less 6 minutes: still cached
    await upstream.listWebhooks();
    expect(authorizeCalls() - before).toBe(1);
    clock.advance(2 * 60_000); // inside the 5-minute margin
    await upstream.listWebhooks();
    expect(authorizeCalls() - before).toBe(2);
  });

  it('re-authorizes once when the token was revoked, then succeeds', async () => {
    const upstream = client();
    await upstream.listWebhooks();
    const before = authorizeCalls();
    const requestsBefore = sandbox.control.requestCount('GET', '/api/v2/webhooks');
    sandbox.control.revokeTokens();
    expect(await upstream.listWebhooks()).toEqual(expect.any(Array));
    expect(authorizeCalls() - before).toBe(1);
    expect(sandbox.control.requestCount('GET', '/api/v2/webhooks') - requestsBefore).toBe(2);
  });

  it('re-authorizes once when the token expired early', async () => {
    const upstream = client();
    await upstream.list('users');
    const before = authorizeCalls();
    sandbox.control.expireTokens();
    await upstream.list('users');
    expect(authorizeCalls() - before).toBe(1);
  });

  it('a static token works, and once revoked is upstream.auth', async () => {
    // Its own sandbox: revoking tokens in the shared one (above) revokes the static token for good.
    const own = createSandbox({ students: 2, staticToken: STATIC_TOKEN });
    await own.start();
    try {
      const upstream = client({ baseUrl: own.url, auth: { token: STATIC_TOKEN } });
      expect(await upstream.listWebhooks()).toEqual([]);
      own.control.revokeTokens();
      const error = await failure(upstream.listWebhooks());
      expect(error).toMatchObject({ code: 'upstream.auth', status: 401, retryable: false });
      expect(own.control.requestCount('POST', '/api/v2/authorize')).toBe(0);
      expect(own.control.requestCount('GET', '/api/v2/webhooks')).toBe(2);
    } finally {
      await own.stop();
    }
  });

  it('wrong client credentials are upstream.auth naming the upstream reason', async () => {
    const error = await failure(client({ auth: { clientId: CLIENT_ID, clientSecret: 'wrong' } }).list('students'));
    expect(error).toMatchObject({ code: 'upstream.auth', status: 400, context: { upstreamCode: 'invalid_client' } });
  });
});

describe('faults', () => {
  it('retries a GET through 500 three times, then reads the list', async () => {
    const clock = testClock(Date.now(), { sleep: 'instant' });
    const before = sandbox.control.requestCount('GET', '/api/v2/students');
    sandbox.control.injectFault({ route: 'GET /api/v2/students', kind: 'status', status: 500, times: 3 });
    expect(await client({ clock }).list('students')).toEqual(sandbox.control.students());
    expect(sandbox.control.requestCount('GET', '/api/v2/students') - before).toBe(4);
    expect(clock.slept).toHaveLength(3);
  });

  it('honours Retry-After: 1 on 429', async () => {
    const clock = testClock(Date.now(), { sleep: 'instant' });
    sandbox.control.injectFault({ route: 'GET /api/v2/users', kind: 'rateLimit', retryAfterSeconds: 1 });
    expect(await client({ clock }).list('users')).toEqual(sandbox.control.users());
    expect(clock.slept).toEqual([1000]);
  });

  it('retries a reset connection on GET', async () => {
    sandbox.control.injectFault({ route: 'GET /api/v2/webhooks', kind: 'reset' });
    expect(await client().listWebhooks()).toEqual(expect.any(Array));
  });

  it('never retries a POST on 500', async () => {
    const students = sandbox.control.students().length;
    const before = sandbox.control.requestCount('POST', '/api/v2/student');
    sandbox.control.injectFault({ route: 'POST /api/v2/student', kind: 'status', status: 500, times: 1 });
    const error = await failure(client().createStudent({ firstname: 'Jan', lastname: 'Nowak', email: 'j@example.com', schoolId: 1 }));
    expect(error).toMatchObject({ code: 'upstream.http', status: 500 });
    expect(sandbox.control.requestCount('POST', '/api/v2/student') - before).toBe(1);
    expect(sandbox.control.students()).toHaveLength(students);
  });

  it.each([
    ['malformed JSON', { kind: 'malformedJson' } as const, 'upstream.invalid_json', undefined],
    ['a truncated body', { kind: 'truncatedJson' } as const, 'upstream.invalid_json', undefined],
    ['a missing data key', { kind: 'body', body: { students: [] } } as const, 'upstream.invalid_response', 'data'],
    ['a string id', { kind: 'body', body: { data: { students: [{ id: '1', user: { id: 2 } }] } } } as const, 'upstream.invalid_response', 'data.students[0].id'],
  ])('%s is an error, never a partial list', async (_name, fault, code, path) => {
    const before = sandbox.control.requestCount('GET', '/api/v2/students');
    sandbox.control.injectFault({ route: 'GET /api/v2/students', ...fault });
    const error = await failure(client().list('students'));
    expect(error.code).toBe(code);
    if (path !== undefined) expect(error.context).toMatchObject({ path, actual: path === 'data' ? 'missing' : 'string' });
    expect(sandbox.control.requestCount('GET', '/api/v2/students') - before).toBe(1);
  });

  it('an empty list is a list', async () => {
    sandbox.control.injectFault({ route: 'GET /api/v2/users', kind: 'emptyList' });
    expect(await client().list('users')).toEqual([]);
  });

  it('lastContact follows the outcome', async () => {
    const upstream = client({ retry: { maxAttempts: 1 } });
    await upstream.listWebhooks();
    expect(upstream.lastContact()).toMatchObject({ ok: true });
    sandbox.control.injectFault({ route: 'GET /api/v2/webhooks', kind: 'status', status: 503 });
    await failure(upstream.listWebhooks());
    expect(upstream.lastContact()).toMatchObject({ ok: false, error: expect.stringContaining('503') });
  });
});
