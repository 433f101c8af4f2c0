import { describe, expect, it } from 'vitest';
import type { Clock } from '../clock.js';
import type { UpstreamClient } from './types.js';
import { testClock } from '../../test/support/clock.js';
import { rejected as failure } from '../../test/support/errors.js';
import { client, count, json, on, raw, reset, seen, server, studentList, useUpstreamStub } from '../../test/support/upstream-server.js';

useUpstreamStub();

/** Which failed calls the client tries again (idempotent ones only), how long it waits, and when it stops. */
describe('retries', () => {
  it('retries a GET on 500 three times, then succeeds', async () => {
    const clock = testClock(1_000_000, { sleep: 'instant' });
    on('GET', '/api/v2/students', json(500, {}), json(502, {}), raw(503, '<html>busy</html>'), studentList(1));
    const students = await client({ clock, retry: { random: () => 0 } }).list('students');
    expect(students).toHaveLength(1);
    expect(count('GET', '/api/v2/students')).toBe(4);
    expect(clock.slept).toEqual([250, 500, 1000]); // random 0 takes no jitter off: the whole 250, 500, 1000
  });

  it('honours Retry-After on 429', async () => {
    const clock = testClock(1_000_000, { sleep: 'instant' });
    on('GET', '/api/v2/users', json(429, {}, { 'retry-after': '1' }), json(200, { data: { users: [] } }));
    expect(await client({ clock }).list('users')).toEqual([]);
    expect(clock.slept).toEqual([1000]);
  });

  it('retries network errors and 408 on GET', async () => {
    on('GET', '/api/v2/webhooks', reset, json(408, {}), json(200, { data: { webhooks: [] } }));
    expect(await client().listWebhooks()).toEqual([]);
    expect(count('GET', '/api/v2/webhooks')).toBe(3);
  });

  it('retries the idempotent webhook DELETE', async () => {
    on('DELETE', '/api/v2/webhook', json(503, {}), json(200, { data: { webhook: { id: 9, isDeleted: true, deletedAt: '2026-11-22 10:00:00' } } }));
    expect(await client().deleteWebhook(9)).toMatchObject({ id: 9, isDeleted: true });
    expect(seen.map((s) => s.url)).toEqual(['/api/v2/webhook?id=9', '/api/v2/webhook?id=9']);
  });

  it.each([
    ['POST create', (c: UpstreamClient) => c.createStudent({ firstname: 'A', lastname: 'B', email: 'a@b.c', schoolId: 1 }), 'POST', '/api/v2/student'],
    ['PATCH update', (c: UpstreamClient) => c.updateStudent(1, { firstname: 'A' }), 'PATCH', '/api/v2/student'],
    ['POST webhook', (c: UpstreamClient) => c.registerWebhook('a.b', 'http://x'), 'POST', '/api/v2/webhook'],
  ])('never retries %s on 500', async (_name, run, method, path) => {
    on(method, path, json(500, {}), json(200, {}));
    const error = await failure(run(client()));
    expect(error).toMatchObject({ code: 'upstream.http', status: 500, retryable: true });
    expect(count(method, path)).toBe(1);
  });

  it('never retries a POST whose connection dropped', async () => {
    on('POST', '/api/v2/student', reset, json(200, {}));
    const error = await failure(client().createStudent({ firstname: 'A', lastname: 'B', email: 'e', schoolId: '1' }));
    expect(error.code).toBe('upstream.network');
    expect(count('POST', '/api/v2/student')).toBe(1);
  });

  it('stops after maxAttempts with the last error', async () => {
    on('GET', '/api/v2/students', json(500, { error: { code: 'serverError', message: 'boom' } }), json(500, {}), json(500, {}));
    const error = await failure(client({ retry: { maxAttempts: 2 } }).list('students'));
    expect(error).toMatchObject({ code: 'upstream.http', status: 500 });
    expect(count('GET', '/api/v2/students')).toBe(2);
  });

  it('does not retry a 400', async () => {
    on('GET', '/api/v2/students', json(400, { error: { code: 'invalidRequest', message: 'nope' } }));
    const error = await failure(client().list('students'));
    expect(error).toMatchObject({ code: 'upstream.http', status: 400, retryable: false, context: { upstreamCode: 'invalidRequest' } });
  });

  it('an abort during back-off is upstream.aborted', async () => {
    const controller = new AbortController();
    const clock: Clock = { now: () => 0, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) };
    on('GET', '/api/v2/students', json(503, {}));
    const pending = client({ clock }).list('students', { signal: controller.signal });
    server.once('request', () => setImmediate(() => controller.abort()));
    expect((await failure(pending)).code).toBe('upstream.aborted');
  });
});
